"""Document tier speed: atomic writes, per-query index refresh, search latency.

    .venv/bin/python -m bench documents                    # 500 and 2,000 documents
    .venv/bin/python -m bench documents --sizes 200 --queries 20   # a quick smoke run

Each document has a heading and three paragraphs drawn from a 3,000-word Zipf vocabulary.
Search latency includes the refresh every query does (one ``stat`` per file, reading
only changed files), compared with re-reading and re-indexing the whole corpus, which is
what a query would cost without the index.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engram import Principal
from engram.backends.files import FileDocumentStore
from engram.recall import HashEmbedder

ALICE = Principal("bench", "alice")


def _document(rng: random.Random, vocabulary: list[str], weights: list[float]) -> str:
    def sentence() -> str:
        return " ".join(rng.choices(vocabulary, weights, k=rng.randint(10, 20)))

    paragraphs = "\n\n".join(sentence() for _ in range(3))
    return f"# {sentence()[:40]}\n\n{paragraphs}\n"


def _timed(action: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _summary(name: str, samples: list[float]) -> str:
    p95 = statistics.quantiles(samples, n=20)[-1] if len(samples) > 1 else samples[0]
    return f"{name:<34} median {statistics.median(samples):8.2f} ms   p95 {p95:8.2f} ms"


def run(size: int, queries: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(3000)]
    with tempfile.TemporaryDirectory() as tmp:
        store = FileDocumentStore(home=Path(tmp), embedder=HashEmbedder(256))
        texts = [_document(rng, vocabulary, weights) for _ in range(size)]
        start = time.perf_counter()
        for n, text in enumerate(texts):
            store.write_text(ALICE, f"notes/{n // 100:03d}/doc{n:05d}.md", text)
        elapsed = time.perf_counter() - start
        print(f"\n{size} documents: atomic write + index {size / elapsed:8.1f} docs/s")
        words = [" ".join(rng.choices(vocabulary[:500], k=3)) for _ in range(queries)]
        cycle = iter(words * 2)
        print(_summary("refresh, nothing changed", _timed(lambda: store.refresh(ALICE), queries)))
        for mode in ("keyword", "hybrid"):
            samples = _timed(lambda m=mode: store.search(ALICE, next(cycle), k=10, mode=m), queries)
            print(_summary(f"search {mode} (incl. refresh)", samples))
        target = store.root(ALICE) / "notes/000/doc00000.md"
        edits = iter(range(queries))

        def edit_then_search() -> None:
            target.write_text(f"# edited\n\nhand edit number {next(edits)}\n")
            store.search(ALICE, "hand edit", k=5, mode="keyword")

        print(_summary("hand edit of 1 file + search", _timed(edit_then_search, queries)))
        store.close()
        rebuild = FileDocumentStore(home=Path(tmp), index_path=Path(tmp) / "fresh.db")
        full = _timed(lambda: rebuild.refresh(ALICE), 1)
        print(_summary("full re-read + re-index (no index)", full))
        rebuild.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench documents")
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args(argv)
    for size in args.sizes:
        run(size, args.queries)
    return 0
