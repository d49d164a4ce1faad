"""Embedding runtimes side by side: ingestion items/s and query-embedding latency.

    .venv/bin/python -m bench embedders                      # numpy, onnx, torch; 1 and 2 threads
    .venv/bin/python -m bench embedders --items 300 --repeats 1 --threads 1   # a smoke run
    .venv/bin/python -m bench embedders --batch 16,32,64 --runtimes numpy,onnx

Every runtime embeds the same short facts (6-16 words, like remembered
preferences) and the same one-line queries. Each runtime runs in its own
process (so no runtime's idle threads slow another), one after the other;
the figures are medians over rounds.
Threads are set explicitly for each runtime (BLAS via threadpoolctl,
onnxruntime session options, ``torch.set_num_threads``). ``/cpu-s`` is items
per second of process CPU time (all threads): on a busy machine it tells what
the runtime costs when wall-clock rates are diluted by other processes.
``cos min`` is the lowest cosine to sentence-transformers' vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram.recall import HashEmbedder, MiniLMEmbedder
from engram.recall._local import locate_model_dir

EmbedFn = Callable[[Sequence[str]], Any]

_SUBJECTS = ["I", "My wife", "The user", "Alice", "Our team", "My manager", "Bob"]
_VERBS = ["prefers", "avoids", "is interested in", "follows", "dislikes", "wants", "needs"]
_OBJECTS = [
    "conservative risk",
    "NVDA, AMD and TSMC",
    "long-form research reports with sources",
    "competitor analysis in every report",
    "dividend stocks in European markets",
    "weekly summaries by email on Monday mornings",
    "low-volatility ETFs",
    "no exposure to tobacco or weapons",
    "charts instead of tables",
]
_TAILS = ["", " since 2019", " for the retirement account", " because of tax rules", " lately"]


def facts(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)}."
        for _ in range(n)
    ]


def questions(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    topics = ["risk", "reports", "tickers", "ETFs", "email", "dividends", "charts", "taxes"]
    return [f"what does the user think about {rng.choice(topics)}?" for _ in range(n)]


@dataclass
class Runtime:
    name: str
    threads: int
    batch: int
    embed: EmbedFn
    load_s: float
    ingest: list[float] = field(default_factory=list)
    per_cpu_s: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    cos_min: float | None = None


def _torch(threads: int, batch: int) -> EmbedFn:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(locate_model_dir()), device="cpu")

    def embed(texts: Sequence[str]) -> Any:
        return model.encode(list(texts), batch_size=batch, normalize_embeddings=True)

    return embed


def _open(name: str, threads: int, batch: int) -> Runtime:
    start = time.perf_counter()
    if name == "torch":
        embed = _torch(threads, batch)
    elif name == "hash":
        embed = HashEmbedder(384).embed
    else:
        embed = MiniLMEmbedder(runtime=name, threads=threads, batch_size=batch).embed
    embed(["warm up the model"])
    return Runtime(name, threads, batch, embed, time.perf_counter() - start)


def _round(runtime: Runtime, corpus: list[str], queries: list[str]) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    runtime.embed(corpus)
    runtime.ingest.append(len(corpus) / (time.perf_counter() - start))
    runtime.per_cpu_s.append(len(corpus) / (time.process_time() - cpu))
    for query in queries:
        start = time.perf_counter()
        runtime.embed([query])
        runtime.query_ms.append((time.perf_counter() - start) * 1000)


def _worker(args: argparse.Namespace) -> int:
    """One runtime in this process: rounds of ingestion and queries, printed as JSON."""
    name, threads, batch = args.worker.split(":")
    corpus, queries = facts(args.items), questions(args.queries)
    runtime = _open(name, int(threads), int(batch))
    for _ in range(args.repeats):
        _round(runtime, corpus, queries)
    sample = np.asarray(runtime.embed(corpus[:200]), dtype=np.float32)
    result = {k: getattr(runtime, k) for k in ("load_s", "ingest", "per_cpu_s", "query_ms")}
    print(json.dumps({**result, "sample": sample.tolist()}))
    return 0


def _spawn(spec: str, args: argparse.Namespace) -> tuple[Runtime, Any]:
    command = [sys.executable, "-m", "bench.embedders", "--worker", spec]
    command += ["--items", str(args.items), "--queries", str(args.queries)]
    command += ["--repeats", str(args.repeats)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    name, threads, batch = spec.split(":")
    runtime = Runtime(name, int(threads), int(batch), HashEmbedder(8).embed, data["load_s"])
    runtime.ingest, runtime.per_cpu_s = data["ingest"], data["per_cpu_s"]
    runtime.query_ms = data["query_ms"]
    return runtime, np.asarray(data["sample"], dtype=np.float32)


def _agreement(runtimes: list[Runtime], samples: list[Any]) -> None:
    reference = next((s for r, s in zip(runtimes, samples, strict=True) if r.name == "torch"), None)
    if reference is None:
        return
    for runtime, sample in zip(runtimes, samples, strict=True):
        if runtime.name != "hash":
            runtime.cos_min = float((sample * reference).sum(1).min())


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def report(runtimes: list[Runtime]) -> None:
    torch_rate = {
        (r.threads, r.batch): statistics.median(r.ingest) for r in runtimes if r.name == "torch"
    }
    print(
        f"{'runtime':<8}{'thr':>4}{'batch':>6}{'items/s':>9}{'min..max':>13}{'vs torch':>9}"
        f"{'/cpu-s':>8}"
        f"{'q p50 ms':>10}{'q p95 ms':>10}{'load s':>8}{'cos min':>9}"
    )
    for r in runtimes:
        rate = statistics.median(r.ingest)
        base = torch_rate.get((r.threads, r.batch))
        ratio = f"{rate / base:.2f}x" if base else "-"
        spread = f"{min(r.ingest):.0f}..{max(r.ingest):.0f}"
        cos = f"{r.cos_min:.5f}" if r.cos_min is not None else "-"
        per_cpu = statistics.median(r.per_cpu_s)
        print(
            f"{r.name:<8}{r.threads:>4}{r.batch:>6}{rate:>9.0f}{spread:>13}{ratio:>9}{per_cpu:>8.0f}"
            f"{_pct(r.query_ms, 50):>10.1f}{_pct(r.query_ms, 95):>10.1f}{r.load_s:>8.1f}{cos:>9}"
        )


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench embedders", description=__doc__)
    parser.add_argument("--items", type=int, default=1000, help="facts embedded per round")
    parser.add_argument("--queries", type=int, default=50, help="single-query embeddings per round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per runtime")
    parser.add_argument("--threads", default="1,2", help="thread counts to try (comma list)")
    parser.add_argument("--batch", default="32", help="batch sizes to try (comma list)")
    parser.add_argument("--runtimes", default="numpy,onnx,torch", help="numpy, onnx, torch, hash")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    if args.worker:
        return _worker(args)
    specs = [
        f"{name}:{threads}:{batch}"
        for threads in _csv(args.threads)
        for batch in _csv(args.batch)
        for name in _csv(args.runtimes)
    ]
    results = [_spawn(spec, args) for spec in specs]
    runtimes, samples = [r for r, _ in results], [s for _, s in results]
    _agreement(runtimes, samples)
    load = os.getloadavg()
    cores = os.cpu_count()
    print(f"{args.items} facts x {args.repeats} rounds; load average {load[0]:.1f}, {cores} cores")
    report(runtimes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
