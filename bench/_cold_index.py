"""engram sqlite's shared vector index, measured from a freshly started process.

The searching process (``bench._probe``) opens the store the benchmark just
loaded, so its first search is the first after opening (nothing of the index
is in its memory yet; the files may be in the page cache), and its resident
memory is its own: private (anon) apart from mapped files (the database and
the index, shared with every process through the page cache).

From the size at which the index's approximate sign-bit pass pays (an opt-in),
a second process measures the same with that pass on (``mode`` sign-bits), so
both appear side by side in one run; recall@10 is measured for each mode.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np


def _p95(lat: Sequence[float]) -> float:
    return statistics.quantiles(lat, n=20)[18] if len(lat) >= 20 else max(lat)


@dataclass
class IndexFigures:
    size: int
    mode: str = "exact"
    open_ms: float = 0.0
    first_ms: float = 0.0
    lat: dict[str, list[float]] = field(default_factory=dict)
    rss_anon: float = 0.0
    rss_mapped: float = 0.0
    index_mb: float = 0.0
    recall: float = 0.0


def measure(
    store: Any, db: Path, url: str, embedder: str, qs: Sequence[str], size: int
) -> list[IndexFigures]:
    """Figures of fresh processes on ``url`` (exact, and with the sign-bit pass on
    where it pays); ``store`` (this process's, exact) writes."""
    from engram.backends.sqlite._index_search import APPROXIMATE_FROM

    modes = ["exact", "sign-bits"] if size >= APPROXIMATE_FROM else ["exact"]
    return [_measure(store, db, url, embedder, qs, size, mode) for mode in modes]


def _measure(
    store: Any, db: Path, url: str, embedder: str, qs: Sequence[str], size: int, mode: str
) -> IndexFigures:
    from bench.multiproc import Probe

    out = IndexFigures(size, mode)
    probe = Probe(url, embedder, mode)
    try:
        out.open_ms = probe.open_ms
        out.first_ms = probe.ms(f"q all {qs[0]}")
        rest = qs[1:]
        out.lat["all"] = [probe.ms(f"q all {q}") for q in rest]
        out.lat["user"] = [probe.ms(f"q user {q}") for q in rest]
        out.lat["interleaved"] = [
            probe.ms(f"q {'all' if i % 2 else 'user'} {q}") for i, q in enumerate(rest)
        ]
        after = []
        for i, q in enumerate(rest[:40]):
            store.put(("bench", "u7"), f"other-process-{i}", {"text": f"{q} written elsewhere"})
            after.append(probe.ms(f"q all {q}"))
        out.lat["after write"] = after
        out.rss_anon, out.rss_mapped = probe.rss_mb()
    finally:
        probe.close()
    files = db.parent.glob(f"{db.name}-vec-*")
    out.index_mb = sum(p.stat().st_blocks * 512 for p in files) / 2**20  # (sparse files)
    out.recall = recall_at_10(store, db, qs[1:], sign_bits=mode == "sign-bits")
    return out


def recall_at_10(store: Any, db: Path, qs: Sequence[str], sign_bits: bool = False) -> float:
    """Share of the index's vector top 10 that reaches the 10th best score of a
    brute-force float64 search over every current vector read from SQLite (ties
    at the boundary count: exact search scores 1.0); ``sign_bits``: of an index
    whose approximate pass is on."""
    import sqlite3

    from engram.backends.sqlite._index_search import APPROXIMATE_FROM
    from engram.backends.sqlite.cold import SQLiteColdBackend
    from engram.stores.cold import Scan, View

    emb = store.embedder
    vectors = emb.embed(list(qs)).astype(np.float64)
    best: list[list[tuple[float, str]]] = [[] for _ in qs]
    conn = sqlite3.connect(db)
    cursor = conn.execute(
        "SELECT id, vector FROM cold_memories WHERE superseded_by IS NULL AND vector IS NOT NULL "
        "AND model = ? AND (expires_at IS NULL OR expires_at > ?)",
        (emb.model_id, datetime.now(UTC).timestamp()),
    )
    while rows := cursor.fetchmany(100_000):
        block = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1)
        scores = vectors @ block.astype(np.float64).T
        for i, row in enumerate(scores):
            top = np.argpartition(-row, min(10, len(row) - 1))[:10]
            best[i] = sorted([*best[i], *((float(row[t]), rows[t][0]) for t in top)], reverse=True)[
                :10
            ]
    conn.close()
    scan = Scan(("bench",), View(datetime.now(UTC)))
    backend = (
        SQLiteColdBackend(db, approximate_from=APPROXIMATE_FROM) if sign_bits else store.backend
    )
    backend.setup()
    hits = []
    for i, vector in enumerate(vectors):
        got = backend.vector_candidates(scan, vector.astype(np.float32), emb.model_id, 10)
        floor = best[i][-1][0] - 1e-5  # tie-aware: any row scoring the 10th best counts
        hits.append(min(10, sum(1 for _, score in got if score >= floor)) / 10)
    if sign_bits:
        backend.close()
    return statistics.mean(hits)


def report(figures: Sequence[IndexFigures]) -> None:
    if not figures:
        return
    print("\nengram sqlite, shared vector index, from a freshly started process (ms, query")
    print("embedding included); 'after write': a search right after another process wrote one item")
    head = f"{'items':>9}{'mode':>10}{'open':>7}{'first':>7}"
    for name in ("all", "user", "interleaved", "after write"):
        head += f"{name + ' p50':>17}{'p95':>7}"
    print(head + f"{'anon MB':>9}{'mapped MB':>10}{'index MB':>9}{'recall@10':>10}")
    for f in figures:
        line = f"{f.size:>9,}{f.mode:>10}{f.open_ms:>7.0f}{f.first_ms:>7.0f}"
        for name in ("all", "user", "interleaved", "after write"):
            lat = f.lat.get(name) or [0.0]
            line += f"{statistics.median(lat):>17.2f}{_p95(lat):>7.2f}"
        print(line + f"{f.rss_anon:>9.0f}{f.rss_mapped:>10.0f}{f.index_mb:>9.0f}{f.recall:>10.3f}")
    for f in figures:
        all_p95, user_p95 = _p95(f.lat["all"]), _p95(f.lat["user"])
        inter = _p95(f.lat["interleaved"])
        extra = statistics.median(f.lat["after write"]) - statistics.median(f.lat["all"])
        print(
            f"{f.size:>9,} {f.mode}: interleaved p95 / max(all, user) p95 = "
            f"{inter / max(all_p95, user_p95):.2f}x; "
            f"after-write p50 - all p50 = {extra:+.2f} ms"
        )
