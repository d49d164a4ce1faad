"""Exact nearest current versions over one process's mapping of an :class:`IndexFile`.

What a process keeps of its own is small and follows the file incrementally: a
live-slot mask, the validity span of the live rows (a conservative bound: when
``now`` lies inside it no validity mask is computed), a mark on the live slots
that close or expire (the only ones tested when few), the row lists of the
prefixes it searched (sorted slots), and one onnxruntime session per sealed
block of int8 codes. After another process's write it reads only the rowids
logged since its last look and patches those slots: a patched slot inside a
block whose session was built earlier is scored in float32 until that block is
rebuilt (after :data:`PATCH_LIMIT` patches, or at once when a slot of it was
erased, so no erased code stays in this process's memory).

Three search paths:

- a prefix (or filter) holding few rows gathers them from the mapping and scores
  only them, exactly: its cost follows its own size, not the store's;
- otherwise, below ``approximate_from`` slots, every slot is scored by the int8
  first pass (float32 over the unsealed last block), masked, and the rows within
  reach rescored: exact (the two-pass logic of
  :class:`~engram.backends.sqlite._vectors.NearestRows`);
- from ``approximate_from`` slots on (opt-in), every slot's sign-bit code is compared with
  the query's (Hamming distance, :mod:`~engram.backends.sqlite._binary`), masked,
  and the closest :func:`~engram.backends.sqlite._binary.candidate_count` rows
  rescored exactly: approximate (a true neighbour whose code lies farther than the
  candidates' is missed), reading 48 bytes a row instead of 384.
"""

from __future__ import annotations

import atexit
import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.backends.sqlite import _binary
from engram.backends.sqlite._index_file import (
    FIRST_SEQ,
    LOGGED,
    IndexFile,
    prefix_hash,
)
from engram.backends.sqlite._vectors import (
    _UNIT,
    NearestRows,
    _Int8Pass,
    _one_blas_thread,
    _onnxruntime,
    _onnxruntime_loaded,
    _rounding,
    _within_reach,
    exact_scores,
    kth_largest,
)
from engram.stores.cold.records import Namespace

F32 = npt.NDArray[np.float32]
Slots = npt.NDArray[np.int64]

PATCH_LIMIT = 4096
"""Patched slots of a block scored in float32 before its session is rebuilt."""
GATHER_FRACTION = 8
"""A selection of at most 1/8 of the slots is gathered and scored alone."""
BOUNDED_SHARE = GATHER_FRACTION
"""Slots that close or expire, up to 1/8 of the slots, are read alone to mask the
invalid ones (more: every slot's bounds are read)."""
BACKGROUND_FROM = 16
"""Blocks without a session from which a search builds them on a background thread
(scoring those blocks in float32 meanwhile) instead of before answering."""
PREFIX_ROWS = 4_000_000
"""Slots kept in prefix row lists (least recently used out beyond)."""
APPROXIMATE_FROM = 262_144
"""Slots from which the sign-bit pass pays, for a store that opts in to it (the exact
int8 pass reads 384 bytes a row for 384 dimensions: 100 MB at this size)."""


@dataclass(frozen=True, slots=True)
class Query:
    """One search: the query vector, the slots allowed (None: every live slot),
    the moment and whether expired rows count, and k."""

    vector: F32
    allowed: Slots | None
    now: float
    include_expired: bool
    k: int


class IndexSearch:
    """This process's search state over one index file."""

    def __init__(
        self,
        file: IndexFile,
        quantize_from: int | None,
        prefix_rows: int = PREFIX_ROWS,
        approximate_from: int | None = None,
    ) -> None:
        self.file = file
        self.prefix_limit = prefix_rows
        self.quantize_from = quantize_from
        self.approximate_from = approximate_from
        self.seq = -1
        self.rebuilds = -1
        self.high = 0
        self.live = np.zeros(0, np.bool_)
        self.bounded = np.zeros(0, np.bool_)
        """Live slots that close or expire: the only ones a search from the latest
        opening on has to test for validity."""
        self.span = (np.inf, -np.inf, -np.inf)
        self.span_exact = False
        """Whether :attr:`span` is that of the live rows (else only a bound: writes
        tighten it and nothing loosens it, so it can exclude a ``now`` that every
        live row admits, once a row that expired or closed is gone)."""
        self.norm = 0.0
        self.sessions: dict[int, _Int8Pass] = {}
        self.patched: dict[int, Slots] = {}
        self.prefixes: OrderedDict[Namespace, Slots] = OrderedDict()
        self.whole: set[Namespace] = set()
        """Prefixes holding every live row (searched as the whole store, no list kept)."""
        self.lock = threading.RLock()
        self._builder: threading.Thread | None = None
        self._stopping = threading.Event()

    def cached(self) -> int:
        """Sessions and prefix lists held (what :meth:`forget_caches` drops)."""
        return len(self.sessions) + len(self.prefixes)

    def forget_caches(self) -> None:
        with self.lock:
            self.sessions.clear()
            self.patched.clear()
            self.prefixes.clear()
            self.whole.clear()

    # -- following the file -----------------------------------------------------------

    def refresh(self, conn: Any) -> None:
        """Take in what the file gained since the last look (``conn``: a SQLite
        connection outside any transaction, for the change log)."""
        head = self.file.header()
        with self.lock:
            if head is None or (head[0], head[2]) == (self.seq, self.rebuilds):
                return
            seq, high, rebuilds = head
            if rebuilds != self.rebuilds and self.rebuilds >= 0:
                self.file.close()  # rebuilt: new files, drop the old mappings
            self.file.remap(high)
            first = conn.execute(FIRST_SEQ).fetchone()[0]
            stale = first is not None and first > self.seq + 1
            if rebuilds != self.rebuilds or self.seq < 0 or stale:
                self._reset(high)
            else:
                logged = conn.execute(LOGGED, (self.seq, seq)).fetchall()
                self._patch(np.unique(np.array([r[1] for r in logged], np.int64)), high)
            self.seq, self.rebuilds, self.high = seq, rebuilds, high

    def _reset(self, high: int) -> None:
        """This process's state from the file, read one block of records at a time."""
        live = np.zeros(self.file.capacity, np.bool_)
        bounded = np.zeros(self.file.capacity, np.bool_)
        span, norm = _span(self.file.meta[:0], live[:0]), 0.0
        for start, part in self._records(high):
            alive = part["live"] == 1
            live[start : start + len(part)] = alive
            bounded[start : start + len(part)] = alive & _ends(part)
            span = _tighter(span, _span(part, alive))
            norm = max(norm, float(part["norm"].max(initial=0.0)))
        self.live, self.bounded = live, bounded
        self.span, self.norm = span, norm * (1 + 1e-4)
        self.span_exact = True
        self.forget_caches()

    def _respan(self) -> None:
        """Make :attr:`span` that of the live rows again (once after each change:
        writes only tighten it, and a search outside it reads bounds)."""
        with self.lock:
            if self.span_exact:
                return
            span = _span(self.file.meta[:0], self.live[:0])
            for start, part in self._records(self.high):
                span = _tighter(span, _span(part, self.live[start : start + len(part)]))
            self.span, self.span_exact = span, True

    def _records(self, high: int) -> Iterator[tuple[int, npt.NDArray[Any]]]:
        """The records of the slots below ``high``, one block at a time: ``(first
        slot, a copy of the block's records)``, read column by column from the CPU
        cache."""
        for start in range(0, high, self.file.block):
            yield start, np.array(self.file.meta[start : min(high, start + self.file.block)])

    def _patch(self, slots: Slots, high: int) -> None:
        if len(self.live) < self.file.capacity:
            self.live = _grown(self.live, self.file.capacity)
            self.bounded = _grown(self.bounded, self.file.capacity)
        if not len(slots):
            return
        meta = self.file.meta[slots]
        alive = meta["live"] == 1
        self.live[slots] = alive
        self.bounded[slots] = alive & _ends(meta)
        self.span = _tighter(self.span, _span(meta, alive))
        self.span_exact = False
        self.norm = max(self.norm, float(meta["norm"].max()) * (1 + 1e-4))
        self._patch_sessions(slots, meta["norm"] == 0)
        for prefix, rows in list(self.prefixes.items()):
            self.prefixes[prefix] = self._repatch(prefix, rows, slots)
        for prefix in list(self.whole):
            outside = meta["ns"][:, len(prefix) - 1] != prefix_hash(prefix)
            if (outside & alive).any():  # a live row outside: no longer every row
                self.whole.discard(prefix)
        self._trim_prefixes()

    def _patch_sessions(self, slots: Slots, erased: npt.NDArray[np.bool_]) -> None:
        for block in np.unique(slots // self.file.block).tolist():
            if block not in self.sessions:
                continue
            mine = (slots // self.file.block) == block
            patched = np.union1d(self.patched.get(block, np.empty(0, np.int64)), slots[mine])
            if erased[mine].any() or len(patched) > PATCH_LIMIT:
                del self.sessions[block]
                self.patched.pop(block, None)
            else:
                self.patched[block] = patched

    def _repatch(self, prefix: Namespace, rows: Slots, slots: Slots) -> Slots:
        """``rows`` (sorted) with ``slots`` (sorted, unique) taken out, then those of
        them that are live under ``prefix`` put back: O(len(rows)) copies, no sort."""
        at = np.searchsorted(rows, slots)
        held = at < len(rows)
        held[held] = rows[at[held]] == slots[held]
        kept = np.delete(rows, at[held])
        hashes = self.file.meta["ns"][slots, len(prefix) - 1]
        joined = slots[(hashes == prefix_hash(prefix)) & self.live[slots]]
        return np.insert(kept, np.searchsorted(kept, joined), joined)

    # -- selecting --------------------------------------------------------------------

    def prefix_rows(self, prefix: Namespace) -> Slots | None:
        """Live slots under ``prefix`` (None: every live slot); ``prefix`` at most
        :data:`DEPTH` labels deep."""
        if not prefix:
            return None
        with self.lock:
            if prefix in self.whole:
                return None
            rows = self.prefixes.get(prefix)
            if rows is None:
                hashes = self.file.meta["ns"][: self.high, len(prefix) - 1]
                found = (hashes == prefix_hash(prefix)) & self.live[: self.high]
                rows = np.flatnonzero(found).astype(np.int64)
                if len(rows) == int(np.count_nonzero(self.live[: self.high])):
                    self.whole.add(prefix)  # the prefix holds every live row
                    return None
                self.prefixes[prefix] = rows
                self._trim_prefixes()
            self.prefixes.move_to_end(prefix)
            return rows

    def _trim_prefixes(self) -> None:
        while len(self.prefixes) > 1 and sum(map(len, self.prefixes.values())) > self.prefix_limit:
            self.prefixes.popitem(last=False)

    # -- searching --------------------------------------------------------------------

    def nearest(self, query: Query) -> tuple[Slots, F32]:
        """``(slots, scores)``: the allowed slots of the top ``k`` (ties at the k-th
        score included), scored exactly; the caller orders and cuts. Exact but for
        the sign-bit pass (see the module)."""
        with self.lock:
            high = self.high
        allowed = query.allowed
        if allowed is not None:
            allowed = allowed[(allowed < high)]
            allowed = allowed[self.live[allowed]]
            if len(allowed) * GATHER_FRACTION <= high:
                return _best(*self._gathered(query, allowed), query.k)
        return _best(*self._scanned(query, high, allowed), query.k)

    def approximate(self, high: int) -> bool:
        """Whether a scan of ``high`` slots takes the sign-bit pass."""
        return self.approximate_from is not None and high >= self.approximate_from

    def _gathered(self, query: Query, slots: Slots) -> tuple[Slots, F32]:
        mask = self._valid(self.file.meta[slots], query)
        nearest = NearestRows(self.file.f32[slots], quantize_from=None)
        rows, scores = nearest.candidates(query.vector, mask, query.k)
        return slots[rows], scores

    def _scanned(self, query: Query, high: int, allowed: Slots | None) -> tuple[Slots, F32]:
        if allowed is None:
            mask = self.live[:high].copy()
        else:
            mask = np.zeros(high, np.bool_)
            mask[allowed] = True
        if not self._all_valid(query):
            self._mask_invalid(mask, query, high)
        if self.approximate(high):
            rows = self._sign_bit_pass(query, high, mask)
            with _one_blas_thread():
                approx = np.asarray(self.file.f32)[rows] @ query.vector  # (float32)
            error = np.full(len(rows), self._f32_bound(query.vector), np.float32)
            rows = rows[_within_reach(approx, error, None, query.k)]
        else:
            approx, error = self._first_pass(query.vector, high)
            rows = _within_reach(approx, error, mask, query.k).astype(np.int64)
        return rows, exact_scores(self.file.f32, rows, query.vector)

    def _sign_bit_pass(self, query: Query, high: int, mask: npt.NDArray[np.bool_]) -> Slots:
        """The allowed slots whose codes lie closest to the query's."""
        code = _binary.encode(query.vector[None, :])[0]
        block = self.file.block
        codes = np.asarray(self.file.bin)  # (a plain view: no memmap per slice)
        closest = _binary.Closest(high, self.file.words * 64)
        for start in range(0, high, block):
            end = min(high, start + block)
            closest.add(start, codes[start // block, :, : end - start], code, mask[start:end])
        return closest.rows(_binary.candidate_count(query.k, int(np.count_nonzero(mask))))

    def _mask_invalid(self, mask: npt.NDArray[np.bool_], query: Query, high: int) -> None:
        """Clear in ``mask`` the slots below ``high`` that ``query``'s moment does not
        admit (its moment lies outside :attr:`span`).

        Only the slots that close or expire can fail from the latest opening on. When
        they are few, only their bounds are read, and they also give the span's
        earliest closing and expiry exactly (an expired fact swept: the span is open
        again, and the next search masks nothing). Before the latest opening, the span
        is first recomputed from the live rows, once per change; what still fails is
        found by reading every slot's bounds."""
        with self.lock:
            marked = np.flatnonzero(self.bounded[: self.high])
            few = len(marked) * BOUNDED_SHARE <= self.high
            if few:
                meta = self.file.meta[marked]
                ends = _span(meta, self.live[marked])
                self.span = (self.span[0], ends[1], ends[2])
        if query.now < self.span[0]:
            self._respan()
        if self._all_valid(query):
            return
        if few and query.now >= self.span[0]:
            inside = marked < high
            bad = ~self._valid(meta[inside], query)
            mask[marked[inside][bad]] = False
        else:
            mask &= self._valid(self.file.meta[:high], query)

    def _all_valid(self, query: Query) -> bool:
        opens, closes, expires = self.span
        return bool(opens <= query.now < closes and (query.include_expired or query.now < expires))

    @staticmethod
    def _valid(meta: npt.NDArray[Any], query: Query) -> npt.NDArray[np.bool_]:
        now = query.now
        mask: npt.NDArray[np.bool_] = (
            (meta["live"] == 1) & (meta["opens"] <= now) & (meta["closes"] > now)
        )
        if not query.include_expired:
            mask &= meta["expires"] > now
        return mask

    def _first_pass(self, query: F32, high: int) -> tuple[F32, F32]:
        """Approximate scores of slots ``[0, high)`` and a bound on each one's error."""
        approx = np.empty(high, np.float32)
        error = np.empty(high, np.float32)
        sealed = self._sealed(high, wait=False)
        bound = self._f32_bound(query)
        missing = [b for b in range(sealed) if b not in self.sessions]
        later = len(missing) >= BACKGROUND_FROM
        if missing and not later:  # few to build before answering: onnxruntime is needed now
            sealed = self._sealed(high)
        for block in range(sealed):
            part = slice(block * self.file.block, (block + 1) * self.file.block)
            session = self.sessions.get(block) if later else self._session(block)
            if session is None:  # being built: this block in float32 this time
                with _one_blas_thread():
                    approx[part] = self.file.f32[part] @ query
                error[part] = bound
                continue
            approx[part], error[part] = session.scores(query)
            self._rescore_patched(block, query, approx, error, bound)
        tail = sealed * self.file.block
        with _one_blas_thread():
            approx[tail:] = self.file.f32[tail:high] @ query
        error[tail:] = bound
        if later:  # started once this pass is done: it would compete with it for the cores
            self._build_later(missing)
        return approx, error

    def _f32_bound(self, query: F32) -> float:
        # |fl(q.x) - q.x| <= dim * u * |q| * |x| for a float32 dot product
        dim = self.file.dim
        bound = (1.01 * dim * _UNIT) * float(np.linalg.norm(query)) * self.norm
        return bound + _rounding(query, self.norm)

    def _rescore_patched(
        self, block: int, query: F32, approx: F32, error: F32, bound: float
    ) -> None:
        patched = self.patched.get(block)
        if patched is not None and len(patched):
            approx[patched] = self.file.f32[patched] @ query
            error[patched] = bound

    def stop(self) -> None:
        """Stop building sessions in the background, once the block being built is
        done (before the files are closed, or the process exits: a build cut off
        inside onnxruntime aborts the process)."""
        self._stopping.set()
        builder = self._builder
        if builder is not None:
            builder.join()

    def _build_later(self, blocks: list[int]) -> None:
        """Build these blocks' sessions on one background thread (a first search of a
        large store answers in float32 instead of waiting for every session)."""
        with self.lock:
            if self._stopping.is_set():
                return
            if self._builder is not None and self._builder.is_alive():
                return
            _stopped_at_exit().add(self)
            self._builder = threading.Thread(target=self._build, args=(blocks,), daemon=True)
            self._builder.start()

    def _build(self, blocks: list[int]) -> None:
        if _onnxruntime() is None:  # (imported here on a process's first search)
            return
        for block in blocks:
            if self._stopping.is_set() or block >= len(self.file.i8):  # (or rebuilt)
                return
            self._session(block)

    def _sealed(self, high: int, wait: bool = True) -> int:
        """Blocks scored by the int8 pass (0 without onnxruntime or below ``quantize_from``).

        With ``wait`` False, a process that has not imported onnxruntime yet counts the
        blocks as if it had, without importing it: when there are enough to build them on
        a background thread, the first search scores them in float32 while that thread
        imports it too (the import alone took 0.7 s of a 1.5 s first search at 1M rows)."""
        if self.quantize_from is None or high < self.quantize_from:
            return 0
        if (wait or _onnxruntime_loaded()) and _onnxruntime() is None:
            return 0
        return high // self.file.block

    def _session(self, block: int) -> _Int8Pass:
        with self.lock:
            session = self.sessions.get(block)
            if session is None:
                part = slice(block * self.file.block, (block + 1) * self.file.block)
                meta = self.file.meta[part]
                codes = np.ascontiguousarray(self.file.i8[block])
                session = _Int8Pass(
                    codes,
                    np.ascontiguousarray(meta["scale"]),
                    np.ascontiguousarray(meta["residual"]),
                    self.norm,
                    _onnxruntime(),
                )
                self.sessions[block] = session
                self.patched.pop(block, None)
            return session


@functools.cache
def _stopped_at_exit() -> weakref.WeakSet[IndexSearch]:
    """The searches that have built sessions in the background, each stopped when the
    process exits (registered with the first)."""
    searches: weakref.WeakSet[IndexSearch] = weakref.WeakSet()

    def stop_all() -> None:
        for search in list(searches):
            search.stop()

    atexit.register(stop_all)
    return searches


def _best(slots: Slots, scores: F32, k: int) -> tuple[Slots, F32]:
    """The slots scoring at least the ``k``-th best score."""
    if len(scores) <= k:
        return (slots, scores) if k > 0 else (slots[:0], scores[:0])
    keep = scores >= kth_largest(scores, k)
    return slots[keep], scores[keep]


def _ends(meta: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Which of the records close or expire (a finite bound)."""
    ends: npt.NDArray[np.bool_] = np.isfinite(meta["closes"]) | np.isfinite(meta["expires"])
    return ends


def _grown(flags: npt.NDArray[np.bool_], capacity: int) -> npt.NDArray[np.bool_]:
    grown = np.zeros(capacity, np.bool_)
    grown[: len(flags)] = flags
    return grown


def _span(meta: npt.NDArray[Any], alive: npt.NDArray[np.bool_]) -> tuple[float, float, float]:
    """Latest opening, earliest closing and earliest expiry of the ``alive`` rows
    (read column by column: no copy of whole records)."""
    if not alive.any():
        return (-np.inf, np.inf, np.inf)
    opens, closes = meta["opens"][alive], meta["closes"][alive]
    return (float(opens.max()), float(closes.min()), float(meta["expires"][alive].min()))


def _tighter(
    old: tuple[float, float, float], new: tuple[float, float, float]
) -> tuple[float, float, float]:
    return (max(old[0], new[0]), min(old[1], new[1]), min(old[2], new[2]))
