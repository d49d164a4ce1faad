"""Recall's cache of candidate excerpts: in process, bounded, emptied by erasure.

A re-ranked recall reads an excerpt (text, value, dates, importance) of each of its
pool's candidates, up to a thousand, and the same memories recur across one user's
queries. What an excerpt holds never changes for a version id (a write makes a new
version with a new id; only a version's end, expiry and vector change later, and an
excerpt holds none of them), so excerpts are kept by id, the first kept leaving first
(a hit does not move an excerpt: that bookkeeping cost more than the rare reload), within
a count and a budget of characters.

An erasure empties the cache (the store's ``forget``, and another process's, which the
store sees at its next recall), and so does a sweep; a read that was under way when the
cache was emptied is not kept, so nothing an erasure removed stays behind in it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence

from engram.stores.cold.contract import Excerpt

Load = Callable[[Sequence[str]], Mapping[str, Excerpt]]

MAX_CHARS = 16 * 2**20
"""Characters of excerpt text kept at most (about 16-50 MB with the values beside them):
16,384 excerpts of facts a sentence or two long fit many times over; a store of long
texts keeps fewer of them."""


class ExcerptCache:
    """Excerpts by version id: at most ``capacity`` of them (0: none kept) and at most
    ``max_chars`` characters of their texts (a store of long texts keeps fewer); an
    excerpt whose text is longer than ``max_text`` (a 64th of ``max_chars`` by default)
    is never kept, so one long text does not push out many short ones."""

    def __init__(
        self, capacity: int, max_chars: int = MAX_CHARS, max_text: int | None = None
    ) -> None:
        self.capacity = capacity
        self.max_chars = max_chars
        self.max_text = max_chars // 64 if max_text is None else max_text
        self._kept: OrderedDict[str, Excerpt] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self._generation = 0

    def read(self, ids: Sequence[str], load: Load) -> dict[str, Excerpt]:
        """The excerpts of ``ids`` (those that exist): kept ones, the rest from ``load``."""
        if self.capacity <= 0:
            return dict(load(ids))
        with self._lock:
            generation = self._generation
            kept = self._kept
            found = {i: e for i in ids if (e := kept.get(i)) is not None}
        missing = [i for i in ids if i not in found]
        if not missing:
            return found
        loaded = load(missing)
        found.update(loaded)
        with self._lock:
            if generation == self._generation:  # not emptied while it loaded
                self._keep(loaded)
        return found

    def _keep(self, loaded: Mapping[str, Excerpt]) -> None:
        kept = self._kept
        for row_id, excerpt in loaded.items():
            if len(excerpt.text) > self.max_text:
                continue
            if row_id not in kept:  # (another thread may have kept it meanwhile)
                kept[row_id] = excerpt
                self._chars += len(excerpt.text)
        while kept and (len(kept) > self.capacity or self._chars > self.max_chars):
            self._chars -= len(kept.popitem(last=False)[1].text)

    def clear(self) -> int:
        """Drop every excerpt; 1 when there were some (a count of caches), else 0."""
        with self._lock:
            self._generation += 1
            held = bool(self._kept)
            self._kept.clear()
            self._chars = 0
        return int(held)

    def __len__(self) -> int:
        return len(self._kept)
