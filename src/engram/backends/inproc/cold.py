"""Cold tier in process memory: the reference backend (tests, docs, ``memory://``).

Plain dicts and a numpy matmul; every rule is evaluated by the same Python
functions the SQL backends compile (``View.admits``, ``filters.matches``).
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

import numpy as np

from engram.recall import index_terms, search_terms
from engram.recall.filters import matches
from engram.stores.cold.contract import ChangeSet, ColdBackend, Scan, Vector, successors
from engram.stores.cold.records import EraseCounts, MemoryRecord, Namespace, in_prefix


class InProcColdBackend(ColdBackend):
    """Dict-backed cold store; thread-safe through one lock."""

    def __init__(self) -> None:
        self._rows: dict[str, MemoryRecord] = {}
        self._vectors: dict[str, tuple[str, Vector]] = {}
        self._lock = threading.RLock()

    def setup(self) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            self._rows.clear()
            self._vectors.clear()

    def apply(self, changes: ChangeSet) -> None:
        with self._lock:
            for closure in changes.closures:
                row = self._rows[closure.id]
                self._rows[closure.id] = _replace(
                    row, valid_to=closure.valid_to, superseded_by=closure.superseded_by
                )
            for new in changes.inserts:
                self._rows[new.record.id] = _as_stored(new.record)
                if new.vector is not None and new.record.embedding_model:
                    self._vectors[new.record.id] = (new.record.embedding_model, new.vector)
            for row_id, expires_at in changes.expiry:
                if row_id in self._rows:
                    self._rows[row_id] = _replace(self._rows[row_id], expires_at=expires_at)

    @contextmanager
    def atomically(self, namespace: Namespace) -> Iterator[None]:
        """The store's lock (one process holds the data: nothing else can write)."""
        with self._lock:
            yield

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        wanted = set(keys)
        with self._lock:
            return {
                r.key: r
                for r in self._rows.values()
                if r.namespace == namespace and r.key in wanted and r.superseded_by is None
            }

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        with self._lock:
            return [self._rows[i] for i in ids if i in self._rows]

    def _selected(self, scan: Scan) -> Iterator[MemoryRecord]:
        with self._lock:
            rows = list(self._rows.values())
        return (row for row in rows if _admits(scan, row))

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        rows = sorted(self._selected(scan), key=lambda r: (-r.recorded_at.timestamp(), r.id))
        return rows[scan.offset : scan.offset + scan.limit]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        terms = set(search_terms(query))
        docs = [(r.id, Counter(index_terms(r.text))) for r in self._selected(scan)]
        if not terms or not docs:
            return []
        scores = _bm25(terms, docs)
        ranked = sorted((s, i) for i, s in scores.items() if s > 0)
        ranked.sort(key=lambda pair: (-pair[0], pair[1]))
        return [i for _, i in ranked[:k]]

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        with self._lock:
            pairs = [
                (r.id, self._vectors[r.id][1])
                for r in self._selected(scan)
                if self._vectors.get(r.id, ("", None))[0] == model_id
            ]
        scored = _scored(pairs, vector)
        return sorted(scored, key=lambda pair: (-pair[1], pair[0]))[:k]

    def cosines(
        self, scan: Scan, ids: Sequence[str], vector: Vector, model_id: str
    ) -> dict[str, float]:
        with self._lock:
            pairs = [
                (i, self._vectors[i][1])
                for i in dict.fromkeys(ids)
                if (row := self._rows.get(i)) is not None
                and _admits(scan, row)
                and self._vectors.get(i, ("", None))[0] == model_id
            ]
        return dict(_scored(pairs, vector))

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        with self._lock:
            rows = [r for r in self._rows.values() if r.namespace == namespace and r.key == key]
        return sorted(rows, key=lambda r: (r.recorded_at, r.id))

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        with self._lock:
            found = {
                r.namespace
                for r in self._rows.values()
                if r.superseded_by is None and in_prefix(r.namespace, prefix)
            }
        return sorted(found)

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        wanted = None if keys is None else set(keys)
        with self._lock:
            doomed = [
                r
                for r in self._rows.values()
                if (in_prefix(r.namespace, prefix) if wanted is None else r.namespace == prefix)
                and (wanted is None or r.key in wanted)
            ]
            vectors = sum(1 for r in doomed if self._vectors.pop(r.id, None) is not None)
            for r in doomed:
                del self._rows[r.id]
        return EraseCounts(
            keys=len({(r.namespace, r.key) for r in doomed}),
            versions=len(doomed),
            vectors=vectors,
            keyword_entries=sum(1 for r in doomed if r.text),
        )

    def compact(self) -> bool:
        return False

    def sweep(self, now: datetime) -> int:
        with self._lock:
            doomed = {r.id: r.superseded_by for r in self._rows.values() if r.expired(now)}
            for row_id in doomed:
                del self._rows[row_id]
                self._vectors.pop(row_id, None)
            links = successors(doomed)
            for row_id, row in list(self._rows.items()):
                if row.superseded_by in links:
                    self._rows[row_id] = _replace(row, superseded_by=links[row.superseded_by])
        return len(doomed)

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        with self._lock:
            rows = [
                r
                for r in self._rows.values()
                if r.text and self._vectors.get(r.id, ("", None))[0] != model_id
            ]
        return sorted(rows, key=lambda r: r.id)[:limit]

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        with self._lock:
            for row_id, vec in zip(ids, vectors, strict=True):
                if row_id in self._rows:
                    self._vectors[row_id] = (model_id, np.array(vec, dtype=np.float32))
                    self._rows[row_id] = _replace(self._rows[row_id], embedding_model=model_id)

    def clear_caches(self) -> int:
        return 0


def _replace(record: MemoryRecord, **changes: object) -> MemoryRecord:
    return replace(record, **changes)  # type: ignore[arg-type]


def _as_stored(record: MemoryRecord) -> MemoryRecord:
    """``record`` with its value as a JSON store reads it back (a tuple as a list, no list
    or dict shared with the caller, who may change it later), as every other backend."""
    return _replace(record, value=json.loads(json.dumps(dict(record.value))))


def _bm25(
    terms: set[str], docs: list[tuple[str, Counter[str]]], k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    n = len(docs)
    avg = sum(sum(c.values()) for _, c in docs) / n or 1.0
    df = {t: sum(1 for _, c in docs if t in c) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    scores: dict[str, float] = {}
    for doc_id, counts in docs:
        length = sum(counts.values())
        score = 0.0
        for t in terms:
            tf = counts.get(t, 0)
            if tf:
                score += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        scores[doc_id] = score
    return scores


def _admits(scan: Scan, row: MemoryRecord) -> bool:
    """Whether ``scan`` selects ``row``: under its prefix, valid in its view, carrying one
    of its tags (when it names any) and matching its conditions."""
    if not in_prefix(row.namespace, scan.prefix) or not scan.view.admits(row):
        return False
    if scan.tags and not any(tag in row.tags for tag in scan.tags):
        return False
    return matches(scan.conditions, row.value)


def _scored(pairs: Sequence[tuple[str, Vector]], vector: Vector) -> list[tuple[str, float]]:
    """``(id, cosine)`` of each ``(id, stored vector)`` pair with ``vector``."""
    if not pairs:
        return []
    sims = np.stack([v for _, v in pairs]) @ vector
    return [(i, float(sim)) for (i, _), sim in zip(pairs, sims, strict=True)]
