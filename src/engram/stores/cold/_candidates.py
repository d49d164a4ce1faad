"""Recall's two candidate searches, run at the same time.

The keyword search runs in a worker thread while the caller embeds the query
and runs the vector search: engines release the GIL while they work (SQLite
while it steps, numpy in its matrix product), so the two overlap on a second core.
The workers live as long as the process (created on first use): starting a
thread per query cost ~4 ms on a loaded 2-core machine.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

from engram.recall._embedder import Embedder
from engram.stores.cold._backend import ColdBackend, Scan

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
