"""Recall's candidates: the two candidate searches, run at the same time, and the
context re-ranking of what they found.

The keyword search runs in a worker thread while the caller embeds the query
and runs the vector search: engines release the GIL while they work (SQLite
while it steps, numpy in its matrix product), so the two overlap on a second core.
The workers live as long as the process (created on first use): starting a
thread per query cost ~4 ms on a loaded 2-core machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from engram.recall import (
    Candidate,
    ContextBoost,
    Embedder,
    Weights,
    combine,
    confidence,
    cosine_confidence,
    keyword_coverage,
    rerank,
    topic_query,
)
from engram.stores.cold.contract import ColdBackend, Scan
from engram.stores.cold.records import Recalled

Candidates = tuple[list[str], list[tuple[str, float]]]


@functools.cache
def _keyword_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="engram-keyword")


def candidates(
    backend: ColdBackend, embedder: Embedder | None, scan: Scan, query: str, n: int
) -> Candidates:
    """``(keyword ids, (id, cosine) pairs)``: up to ``n`` of each, best first."""
    if embedder is None:
        return backend.keyword_candidates(scan, query, n), []
    keyword = _keyword_pool().submit(backend.keyword_candidates, scan, query, n)
    try:
        qvec = embedder.embed([query])[0]
        vector = backend.vector_candidates(scan, qvec, embedder.model_id, n)
    finally:
        found = keyword.result()
    return found, vector


@dataclass(frozen=True, slots=True)
class Ranking:
    """How re-ranked candidates are scored: the store's weights, and the cosine its
    calibration centres on (its relevance floor)."""

    weights: Weights
    floor: float


def in_context(
    query: str,
    found: Sequence[Recalled],
    boost: ContextBoost,
    search: Callable[[str], list[Recalled]],
    ranking: Ranking,
) -> list[Recalled]:
    """``found`` re-ranked by :func:`engram.recall.rerank` (when the query names
    speakers, ``search`` recalls the query without them for the topic cosines), then by
    ``alpha*recency + beta*importance + gamma*relevance``, scores calibrated."""
    by_id = {r.record.id: r for r in found}
    candidates = [_candidate(r, boost) for r in found]
    topic = topic_query(query, candidates, boost)
    if topic is not None:
        cosines = {r.record.id: r.similarity for r in search(topic)}
        candidates = [replace(c, topic_similarity=cosines.get(c.id)) for c in candidates]
    reranked = rerank(query, candidates, boost)
    top = max((score for _, score in reranked), default=0.0) or 1.0
    relative = {i: score / top for i, score in reranked}
    prior = {i: _prior(by_id[i], ranking) for i in relative}
    order = sorted(relative, key=lambda i: -relative[i] * prior[i])
    own = _confidences(query, found, ranking.floor)
    best = max(own.values(), default=0.0)
    out = []
    for i in order:
        relevance = min(best * relative[i], own[i])
        out.append(replace(by_id[i], score=relevance * prior[i], relevance=relevance))
    return out


def _prior(hit: Recalled, ranking: Ranking) -> float:
    """The weights applied with full relevance: 1.0 for a fresh memory of top importance,
    less as recency and importance fall (so a weak match never scores high for them)."""
    weights = ranking.weights
    return combine(weights, recency=hit.recency, importance=hit.importance, relevance=1.0)


def _confidences(query: str, found: Sequence[Recalled], floor: float) -> dict[str, float]:
    """How well each of ``found`` matches ``query`` (:mod:`engram.recall._calibrate`)."""
    coverage = keyword_coverage(query, [r.record.text for r in found])
    return {
        r.record.id: confidence(cosine_confidence(r.similarity, floor), c)
        for r, c in zip(found, coverage, strict=True)
    }


def _candidate(hit: Recalled, boost: ContextBoost) -> Candidate:
    value = hit.record.value
    position = value.get(boost.position_field)
    return Candidate(
        hit.record.id,
        hit.relevance,
        str(value.get(boost.session_field, "")),
        position if isinstance(position, int) else -1,
        str(value.get(boost.speaker_field, "")),
        hit.record.text,
        hit.similarity,
        date=str(value.get(boost.date_field) or hit.record.valid_from.date().isoformat()),
    )
