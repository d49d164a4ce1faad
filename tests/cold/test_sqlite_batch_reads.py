"""Inside one SQLite transaction, the writing thread reads what it wrote.

``remember_many`` decides a batch's facts one after another in one transaction, so
each decision must see the batch's earlier writes exactly as if each had been
committed: here one store runs random writes (puts, updates, supersessions, deletes,
erasures, sweeps) inside one transaction, another commits each, and after every step
their vector and keyword candidates are the same, for every prefix. Another thread
meanwhile sees only what is committed.
"""

from __future__ import annotations

import itertools
import tempfile
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cold_support import Clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, Scan, View

NAMESPACES = [("t", "u1"), ("t", "u10"), ("t", "u1", "a"), ("t2", "u1")]
PREFIXES = [(), ("t",), ("t", "u1"), ("t", "u10"), ("t2",)]
WORDS = ["sail", "lake", "tea", "bike", "rain", "jazz"]
EMBEDDER = HashEmbedder(32)


def _text(words: list[int]) -> str:
    return " ".join(WORDS[w] for w in words)


texts = st.lists(st.integers(0, len(WORDS) - 1), min_size=1, max_size=3).map(_text)
spaces = st.integers(0, len(NAMESPACES) - 1)
keys = st.sampled_from(["k0", "k1", "k2"])
operations = st.one_of(
    st.tuples(st.just("put"), spaces, keys, texts, st.sampled_from([None, 600.0])),
    st.tuples(st.just("remember"), spaces, texts, st.sampled_from([None, "city"])),
    st.tuples(st.just("update"), spaces, keys, texts),
    st.tuples(st.just("delete"), spaces, keys),
    st.tuples(st.just("forget"), st.integers(0, len(PREFIXES) - 1)),
    st.tuples(st.just("sweep"), st.integers(1, 20)),
)


def _apply(store: LongTermStore, clock: Clock, step: tuple[Any, ...]) -> None:
    kind, *args = step
    if kind == "put":
        space, key, text, ttl = args
        store.put(NAMESPACES[space], key, {"text": text}, ttl=ttl)
    elif kind == "remember":
        space, text, slot = args
        store.remember(NAMESPACES[space], text, slot=slot, tags=("fact",))
    elif kind == "update":
        space, key, text = args
        if store.get(NAMESPACES[space], key) is not None:
            store.update(NAMESPACES[space], key, text)
    elif kind == "delete":
        space, key = args
        store.delete(NAMESPACES[space], key)
    elif kind == "forget":
        store.backend.erase(PREFIXES[args[0]], None)
    else:
        clock.now += timedelta(minutes=float(args[0]))
        store.sweep()


def _answers(backend: SQLiteColdBackend, now: datetime) -> list[object]:
    found: list[object] = []
    for prefix, text in itertools.product(PREFIXES, ("sail lake", "tea jazz rain")):
        scan = Scan(prefix, View(now), (), ())
        query = EMBEDDER.embed([text])[0]
        vectors = backend.vector_candidates(scan, query, EMBEDDER.model_id, 4)
        found.append([(i, round(s, 5)) for i, s in vectors])
        found.append(backend.keyword_candidates(scan, text, 4))
    return found


def _store(path: Path, clock: Clock) -> LongTermStore:
    store = LongTermStore(SQLiteColdBackend(path), embedder=EMBEDDER, clock=clock, policy=None)
    store.setup()
    serial = itertools.count()
    store._new_id = lambda: f"id{next(serial):05d}"  # type: ignore[method-assign]
    return store


def _both(run: Callable[[LongTermStore, LongTermStore, Clock, Clock], None]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        inside_clock, outside_clock = Clock(), Clock()
        inside = _store(Path(folder) / "inside.db", inside_clock)
        outside = _store(Path(folder) / "outside.db", outside_clock)
        try:
            run(inside, outside, inside_clock, outside_clock)
        finally:
            inside.close()
            outside.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=st.lists(operations, max_size=6), steps=st.lists(operations, min_size=1, max_size=12))
def test_reads_inside_a_transaction_see_its_writes_as_if_committed(
    before: list[tuple[Any, ...]], steps: list[tuple[Any, ...]]
) -> None:
    def run(inside: LongTermStore, outside: LongTermStore, ic: Clock, oc: Clock) -> None:
        for step in before:  # committed first: the index holds these
            _apply(inside, ic, step)
            _apply(outside, oc, step)
        _answers(inside.backend, ic.now)  # the index state is built before the batch
        with inside.backend.atomically(("t",)):
            for step in steps:
                _apply(inside, ic, step)
                _apply(outside, oc, step)
                assert _answers(inside.backend, ic.now) == _answers(outside.backend, oc.now)
        assert _answers(inside.backend, ic.now) == _answers(outside.backend, oc.now)

    _both(run)


def test_another_thread_sees_only_what_is_committed(tmp_path: Path) -> None:
    clock = Clock()
    store = _store(tmp_path / "m.db", clock)
    scan = Scan(("t",), View(clock.now + timedelta(hours=1)), (), ())
    try:
        store.put(("t", "u1"), "old", {"text": "sail lake"})
        committed = store.backend.keyword_candidates(scan, "sail", 4)
        seen: list[list[str]] = []
        reader = threading.Thread(
            target=lambda: seen.append(store.backend.keyword_candidates(scan, "sail", 4))
        )
        with store.backend.atomically(("t", "u1")):
            store.put(("t", "u1"), "new", {"text": "sail lake tea"})
            store.delete(("t", "u1"), "old")
            mine = store.backend.keyword_candidates(scan, "sail", 4)
            reader.start()
            reader.join(timeout=5.0)  # the keyword reader waits for no writer
            finished = not reader.is_alive()
        reader.join()
        assert finished
        assert [r.key for r in store.backend.fetch(mine)] == ["new"]
        assert len(committed) == 1 and seen == [committed]
    finally:
        store.close()


def test_a_failed_transaction_leaves_the_reads_as_they_were(tmp_path: Path) -> None:
    clock = Clock()
    store = _store(tmp_path / "m.db", clock)
    try:
        store.put(("t", "u1"), "old", {"text": "sail lake"})
        before = _answers(store.backend, clock.now)
        with pytest.raises(RuntimeError), store.backend.atomically(("t", "u1")):
            store.put(("t", "u1"), "new", {"text": "sail lake tea"})
            store.delete(("t", "u1"), "old")
            raise RuntimeError("stop")
        assert _answers(store.backend, clock.now) == before
        assert np.isfinite(before[0][0][1])  # type: ignore[index]
    finally:
        store.close()
