"""The cold-tier backend interface: the few primitive operations an engine provides.

:class:`~engram.stores.cold.LongTermStore` builds everything else (LangGraph's
``BaseStore`` ops, recall, consolidation, TTL, erasure reports) on these. A
backend is synchronous; the store runs it in a worker thread for async callers,
so sync and async share one code path. Backends must be thread-safe (a lock
around the connection is enough).

Semantics every backend must keep (pinned by ``tests/cold``):

- Namespaces match label by label: prefix ``("t", "u1")`` matches ``("t", "u1")``
  and ``("t", "u1", "x")`` but never ``("t", "u10")``. Store them joined with
  :data:`~engram.stores.cold.records.NAMESPACE_SEPARATOR` and match the exact
  string or the range ``[p + SEP, p + chr(0x20))``.
- A :class:`~engram.stores.cold.records.View` selects versions; compile the same
  rules as ``View.admits``.
- Filters follow :mod:`engram.recall.filters` (compile with ``compile_filter``
  and a ``FilterDialect``); ``tags`` matches records carrying any of the tags.
- Erasure removes every byte: rows, history, keyword index entries, vectors, caches.
- :meth:`ColdBackend.atomically` excludes every other writer of the namespace, in
  every process: the store decides a write (consolidation reads the neighbours, the
  current head) and applies it inside it, so two writers never both supersede one
  head. A unique-head violation that still happens is a :class:`~engram.errors.StaleWriteError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from engram.recall.filters import Condition
from engram.stores.cold._fence import Fence
from engram.stores.cold.records import EraseCounts, MemoryRecord, Namespace, View

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A version to insert, with its unit vector (``None`` when not embedded)."""

    record: MemoryRecord
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class Closure:
    """Ends a version's validity: sets ``valid_to`` and (if superseded) ``superseded_by``."""

    id: str
    valid_to: datetime
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Writes applied atomically by :meth:`ColdBackend.apply`.

    Order: closures, then inserts (so a new head may replace a closed one), then
    ``expiry`` updates (``(id, expires_at)`` pairs, for TTL refresh on read).
    """

    inserts: tuple[NewVersion, ...] = ()
    closures: tuple[Closure, ...] = ()
    expiry: tuple[tuple[str, datetime | None], ...] = ()


class Excerpt(NamedTuple):
    """What recall's re-ranking reads of a candidate version: its text, its value (the
    speaker, session, position and date fields), when it became valid, and its scoring
    signals (:meth:`ColdBackend.signals`). Lighter to read than a whole
    :class:`~engram.stores.cold.records.MemoryRecord`: a re-ranked recall reads one per
    candidate, and whole records only for its results. A named tuple, not a frozen
    dataclass: as immutable, and built in a third of the time (a recall builds a pool
    of them)."""

    id: str
    text: str
    value: Mapping[str, Any]
    valid_from: datetime
    recorded_at: datetime
    importance: float
    stems: str | None = None
    """The text's stems (:func:`engram.recall.stored_stems`), when the backend stores
    them with the version; None to take them from ``text``."""


@dataclass(frozen=True, slots=True)
class Scan:
    """Which versions a read considers: namespace prefix, view, filter, tags, paging.

    Results are ordered by ``recorded_at`` descending, then ``id``.
    """

    prefix: Namespace
    view: View
    conditions: tuple[Condition, ...] = ()
    tags: tuple[str, ...] = ()
    limit: int = 10
    offset: int = 0


class ColdBackend(ABC):
    """One storage engine for the cold tier (memory, SQLite, PostgreSQL...)."""

    @cached_property
    def fence(self) -> Fence:
        """The fence between the writes of a user's memory on this backend and the
        user's erasure, shared by every store on it (:mod:`._fence`)."""
        return Fence()

    @abstractmethod
    def setup(self) -> None:
        """Create or migrate the schema; idempotent. Call once before use."""

    @abstractmethod
    def close(self) -> None:
        """Release connections and caches."""

    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Apply ``changes`` in one transaction (at most one head per namespace+key)."""

    @abstractmethod
    def atomically(self, namespace: Namespace) -> AbstractContextManager[None]:
        """Hold ``namespace`` exclusively, against every thread and process, while the
        block reads and applies its writes (the SQL engines commit them together when
        the block ends). Reentrant within one thread."""

    @abstractmethod
    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        """Current versions (``superseded_by`` is None) of ``keys``, whatever their validity."""

    @abstractmethod
    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """Versions by id (unknown ids are skipped; order not guaranteed)."""

    def signals(self, ids: Sequence[str]) -> dict[str, tuple[datetime, float]]:
        """``id -> (recorded_at, importance)``: what scoring needs, before the full fetch.

        The default fetches whole records; engines override it with a lighter query.
        """
        return {r.id: (r.recorded_at, r.importance) for r in self.fetch(ids)}

    def excerpts(self, ids: Sequence[str]) -> dict[str, Excerpt]:
        """``id -> Excerpt`` of the versions ``ids`` (unknown ids are skipped).

        The default fetches whole records; engines override it with a lighter query.
        """
        return {
            r.id: Excerpt(r.id, r.text, r.value, r.valid_from, r.recorded_at, r.importance)
            for r in self.fetch(ids)
        }

    @abstractmethod
    def scan(self, scan: Scan) -> list[MemoryRecord]:
        """Versions selected by ``scan``, newest first, paged."""

    @abstractmethod
    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        """Ids of up to ``k`` versions matching ``query``'s words, best first (BM25-like).

        Any word may match (OR semantics). ``scan.limit``/``offset`` are ignored.
        """

    @abstractmethod
    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the ``k`` versions nearest ``vector``, best first.

        Only versions embedded with ``model_id`` count. The result must hold ``k``
        rows whenever ``k`` versions qualify, however selective the scan is.
        """

    @abstractmethod
    def cosines(
        self, scan: Scan, ids: Sequence[str], vector: Vector, model_id: str
    ) -> dict[str, float]:
        """``id -> cosine`` with ``vector`` of each of ``ids`` that ``scan`` admits and that
        is embedded with ``model_id`` (the others are left out), scored exactly as
        :meth:`vector_candidates` scores it: recall's re-ranking reads the cosine of a
        candidate the vector search did not return (a keyword match), and of its
        candidates with the query's topic, without searching again."""

    @abstractmethod
    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        """Every stored version of one key, oldest first."""

    @abstractmethod
    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        """Distinct namespaces holding a current version under ``prefix``, sorted."""

    @abstractmethod
    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        """Hard-delete every version of ``keys`` in exactly the namespace ``prefix``,
        or, when ``keys`` is None, of every key in ``prefix`` and below it.

        Deletes rows, history, keyword-index entries and vectors, and drops caches.
        """

    @abstractmethod
    def compact(self) -> bool:
        """Make erased bytes unrecoverable from storage files (vacuum, merge
        indexes, checkpoint logs); return True if the engine did something."""

    @abstractmethod
    def sweep(self, now: datetime) -> int:
        """Hard-delete versions whose ``expires_at`` is at or before ``now``; return how many.

        A version a deleted one superseded names the first later version of its key that
        stays instead (:func:`successors`), or none: then it is its key's head again,
        ended at its ``valid_to`` as a retracted one is, so it never comes back as current
        and no ``superseded_by`` names a version that is gone."""

    @abstractmethod
    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        """Up to ``limit`` versions with text whose vector is missing or from another model."""

    @abstractmethod
    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        """Replace the vectors of versions ``ids`` (rows of ``vectors``) and their model id."""

    @abstractmethod
    def clear_caches(self) -> int:
        """Drop in-process caches (vector matrices...); return how many were dropped."""

    def erasures(self) -> int:
        """How many erasures (:meth:`erase`) the store has committed, from any process:
        a process whose caches may hold text seen before drops them when this moves.
        0 for a backend that no other process writes to (it never moves)."""
        return 0


def successors(swept: Mapping[str, str | None]) -> dict[str, str | None]:
    """For each swept version (``id -> superseded_by``), the first version after it in its
    key's chain that stays (``None`` when none does): what a version that named it as its
    successor names instead (:meth:`ColdBackend.sweep`)."""

    def first(row_id: str) -> str | None:
        seen = {row_id}
        after = swept[row_id]
        while after is not None and after in swept and after not in seen:
            seen.add(after)
            after = swept[after]
        return None if after in seen else after

    return {row_id: first(row_id) for row_id in swept}
