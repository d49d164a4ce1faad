"""Memory layer latency on the embedded default: recall (context block), remember, forget.

    python -m bench memory_layer [--facts 5000] [--docs 50] [--queries 50] [--embedder hash]

Loads ``--facts`` long-term facts (bulk) and ``--docs`` Markdown documents for one user
among a few, then prints median and p95 of ``recall`` within an 800-token budget, of
``remember`` (policy + consolidation + storage) and the time of a full cross-tier ``forget``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engram import Memory, Principal
from engram.recall import EMBEDDER_HELP, embedder_from_name

TOPICS = ("NVDA", "AMD", "INTC", "AAPL", "GOOGL", "bonds", "dividends", "margins", "risk")


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _figures(label: str, ms: list[float]) -> None:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"{label:<28} n={len(ms):<5} median {statistics.median(ms):8.2f} ms   p95 {p95:8.2f} ms")


def _load(memory: Memory, user: Principal, facts: int, docs: int) -> None:
    items = [
        (
            user.namespace,
            f"k{i}",
            {"text": f"Note {i} about {TOPICS[i % len(TOPICS)]} trend {i % 97}"},
        )
        for i in range(facts)
    ]
    memory.store.put_many(items)
    for slot, text in (("risk", "Risk tolerance is conservative"), ("depth", "Prefers deep dives")):
        memory.remember(user, text, slot=slot, tags=("preference",))
    for i in range(docs):
        topic = TOPICS[i % len(TOPICS)]
        body = f"# {topic} {i}\n\nFindings on {topic}: margins, growth and risk {i}.\n"
        memory.documents.write(user, f"users/{user.user_id}/research/{topic}-{i}.md", body)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench memory_layer")
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--embedder", default="hash", help=EMBEDDER_HELP)
    args = parser.parse_args(argv)
    user = Principal("bench", "u0")
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory.open(Path(tmp) / ".engram", embedder=embedder_from_name(args.embedder))
        with memory:
            load = _timed(lambda: _load(memory, user, args.facts, args.docs))
            print(f"loaded {args.facts} facts + {args.docs} documents in {load:.0f} ms")
            queries = [f"Update my {TOPICS[i % len(TOPICS)]} analysis" for i in range(args.queries)]
            memory.recall(user, queries[0], 800)  # warm caches
            _figures(
                "recall (800-token block)",
                [_timed(lambda q=q: memory.recall(user, q, 800)) for q in queries],
            )
            _figures(
                "remember (policy+consol.)",
                [
                    _timed(lambda i=i: memory.remember(user, f"Follows ticker {i} closely now"))
                    for i in range(args.queries)
                ],
            )
            print(f"{'forget (every tier)':<28} {_timed(lambda: memory.forget(user)):8.0f} ms")
    return 0
