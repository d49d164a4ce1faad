"""Embedding runtimes side by side: ingestion items/s, CPU per item, FLOP rate, query latency.

    .venv/bin/python -m bench embedders              # numpy, onnx, onnx-int8, torch; 1, 2 threads
    .venv/bin/python -m bench embedders --items 300 --repeats 1 --threads 1   # a smoke run
    .venv/bin/python -m bench embedders --batch 16,32,64 --runtimes onnx,onnx-int8
    .venv/bin/python -m bench embedders --corpus facts,cold,locomo,longmemeval --runtimes onnx
    .venv/bin/python -m bench embedders --ort-options  # onnxruntime session options
    .venv/bin/python -m bench embedders --int8-plans   # int8 accuracy / speed curve

Corpora (``tok/item`` counts WordPieces with [CLS] and [SEP]):
``facts`` - short memory facts (6-16 words, like remembered preferences): the
realistic memory items the ingestion target is about; ``cold`` - bench/cold.py's
pseudo-words (2-4 syllables each, ~2x the tokens of English facts); ``locomo`` /
``longmemeval`` - conversation turns from $ENGRAM_EVAL_DATA or ../shared/data (longer than facts).

Every runtime embeds the same texts and the same one-line queries, each in its
own process (so no runtime's idle threads slow another), one after the other;
figures are medians over rounds. ``threads`` 2 runs two batches at once on the
onnx runtimes (BLAS threads for numpy, ``torch.set_num_threads`` for torch).
``cpu ms`` is process CPU time (all threads) per item: on a busy machine it
says what a runtime costs when wall-clock rates are diluted by other processes.
``GF/cpu-s`` is the float work done (6 layers' matrix products and attention on
the padded batches, ~21 MFLOP per token) per CPU-second. ``cos min/mean`` compare
with sentence-transformers over 400 texts mixed from every corpus.
"""

from __future__ import annotations

import argparse
import itertools
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
from engram.recall._local import length_batches, load_tokenizer, locate_model_dir

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
FLOP_PER_TOKEN = 6 * 2 * (384 * 1152 + 384 * 384 + 2 * 384 * 1536)
"""all-MiniLM-L6-v2: Q/K/V, attention output and the two feed-forward products, 6 layers."""


def facts(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)}."
        for _ in range(n)
    ]


def _turns(kind: str) -> list[str]:
    from engram.eval._data import load_locomo, load_longmemeval

    if kind == "locomo":
        return [t.text for c in load_locomo() for t in c.turns]
    return [t.text for t in load_longmemeval().turns]


def corpus(kind: str, n: int, seed: int = 1) -> list[str]:
    """``n`` texts of one corpus (see the module help); turns are sampled, repeating if short."""
    if kind == "facts":
        return facts(n)
    if kind == "cold":
        from bench.cold import corpus as cold_corpus

        return [str(value["text"]) for _, _, value in cold_corpus(n)[0]]
    pool = _turns(kind)
    return random.Random(seed).choices(pool, k=n)


def diverse(each: int = 100) -> list[str]:
    """The agreement sample: ``each`` texts from every corpus."""
    return [t for kind in CORPORA for t in corpus(kind, each, seed=2)]


CORPORA = ("facts", "cold", "locomo", "longmemeval")


def questions(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    topics = ["risk", "reports", "tickers", "ETFs", "email", "dividends", "charts", "taxes"]
    return [f"what does the user think about {rng.choice(topics)}?" for _ in range(n)]


def token_counts(texts: Sequence[str]) -> list[int]:
    tokenizer = load_tokenizer(locate_model_dir())
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]


def padded_flop(lengths: Sequence[int], batch: int) -> float:
    """FLOP of the padded batches the embedder runs (texts sorted by length)."""
    total = 0.0
    for rows in length_batches(lengths, batch):
        width = max(lengths[i] for i in rows)
        total += len(rows) * (width * FLOP_PER_TOKEN + 6 * 4 * width * width * 384)
    return total


@dataclass
class Runtime:
    name: str
    threads: int
    batch: int
    corpus: str
    embed: EmbedFn
    load_s: float
    ingest: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    tokens: float = 0.0
    flop: float = 0.0
    cos: tuple[float, float] | None = None


def _torch(threads: int, batch: int) -> EmbedFn:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(locate_model_dir()), device="cpu")

    def embed(texts: Sequence[str]) -> Any:
        return model.encode(list(texts), batch_size=batch, normalize_embeddings=True)

    return embed


def _open(name: str, threads: int, batch: int, kind: str) -> Runtime:
    start = time.perf_counter()
    if name == "torch":
        embed = _torch(threads, batch)
    elif name == "hash":
        embed = HashEmbedder(384).embed
    else:
        embed = MiniLMEmbedder(runtime=name, threads=threads, batch_size=batch).embed
    embed(["warm up the model"])
    return Runtime(name, threads, batch, kind, embed, time.perf_counter() - start)


def _round(runtime: Runtime, texts: list[str], queries: list[str]) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    runtime.embed(texts)
    runtime.ingest.append(len(texts) / (time.perf_counter() - start))
    runtime.cpu_s.append((time.process_time() - cpu) / len(texts))
    for query in queries:
        start = time.perf_counter()
        runtime.embed([query])
        runtime.query_ms.append((time.perf_counter() - start) * 1000)


def _worker(args: argparse.Namespace) -> int:
    """One runtime in this process: rounds of ingestion and queries, printed as JSON."""
    name, threads, batch, kind = args.worker.split(":")
    texts, queries = corpus(kind, args.items), questions(args.queries)
    runtime = _open(name, int(threads), int(batch), kind)
    for _ in range(args.repeats):
        _round(runtime, texts, queries)
    sample = np.asarray(runtime.embed(diverse()), dtype=np.float32)
    result = {k: getattr(runtime, k) for k in ("load_s", "ingest", "cpu_s", "query_ms")}
    print(json.dumps({**result, "sample": sample.tolist()}))
    return 0


def _spawn(spec: str, args: argparse.Namespace) -> tuple[Runtime, Any]:
    command = [sys.executable, "-m", "bench.embedders", "--worker", spec]
    command += ["--items", str(args.items), "--queries", str(args.queries)]
    command += ["--repeats", str(args.repeats)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    name, threads, batch, kind = spec.split(":")
    runtime = Runtime(name, int(threads), int(batch), kind, HashEmbedder(8).embed, data["load_s"])
    runtime.ingest, runtime.cpu_s = data["ingest"], data["cpu_s"]
    runtime.query_ms = data["query_ms"]
    lengths = token_counts(corpus(kind, args.items))
    runtime.tokens = statistics.mean(lengths)
    runtime.flop = padded_flop(lengths, int(batch)) / len(lengths)
    return runtime, np.asarray(data["sample"], dtype=np.float32)


def _agreement(runtimes: list[Runtime], samples: list[Any]) -> None:
    reference = next((s for r, s in zip(runtimes, samples, strict=True) if r.name == "torch"), None)
    if reference is None:
        return
    for runtime, sample in zip(runtimes, samples, strict=True):
        if runtime.name != "hash":
            cosines = (sample * reference).sum(1)
            runtime.cos = (float(cosines.min()), float(cosines.mean()))


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def report(runtimes: list[Runtime]) -> None:
    print(
        f"{'corpus':<12}{'tok/item':>9}{'runtime':>10}{'thr':>4}{'batch':>6}{'items/s':>8}"
        f"{'min..max':>10}{'cpu ms':>7}{'GF/s':>6}{'GF/cpu-s':>9}"
        f"{'q p50 ms':>9}{'q p95':>7}{'load s':>7}{'cos min':>8}{'mean':>8}"
    )
    for r in runtimes:
        rate, cpu = statistics.median(r.ingest), statistics.median(r.cpu_s)
        spread = f"{min(r.ingest):.0f}..{max(r.ingest):.0f}"
        cos = f"{r.cos[0]:>8.4f}{r.cos[1]:>8.4f}" if r.cos is not None else f"{'-':>8}{'-':>8}"
        print(
            f"{r.corpus:<12}{r.tokens:>9.1f}{r.name:>10}{r.threads:>4}{r.batch:>6}{rate:>8.0f}"
            f"{spread:>10}{cpu * 1000:>7.2f}{r.flop * rate / 1e9:>6.0f}{r.flop / cpu / 1e9:>9.0f}"
            f"{_pct(r.query_ms, 50):>9.1f}{_pct(r.query_ms, 95):>7.1f}{r.load_s:>7.1f}{cos}"
        )


def ort_options(args: argparse.Namespace) -> int:
    """onnxruntime session options side by side in ONE process, rounds interleaved."""
    import onnxruntime as ort

    from engram.recall._bert import BertWeights
    from engram.recall._local import mean_pool, pad_batch
    from engram.recall._onnx import build_model

    model_dir = locate_model_dir()
    model, texts = build_model(BertWeights.load(model_dir)), corpus("facts", args.items)
    encodings = [e.ids for e in load_tokenizer(model_dir).encode_batch(texts)]
    levels = {"all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    levels["basic"] = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC

    def session(threads: int, spin: str, level: str) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", spin)
        options.graph_optimization_level = levels[level]
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    grid = [(1, "0", "all"), (1, "0", "basic"), (2, "0", "all"), (2, "1", "all"), (1, "1", "all")]
    sessions = {spec: session(*spec) for spec in grid}
    batches = [int(b) for b in _csv(args.batch)]
    times: dict[tuple[Any, int], list[tuple[float, float]]] = {}
    for _, spec, batch in itertools.product(range(args.repeats), grid, batches):
        start, cpu = time.perf_counter(), time.process_time()
        for rows in length_batches([len(e) for e in encodings], batch):
            ids, mask = pad_batch([encodings[i] for i in rows])
            feed = {"input_ids": ids, "attention_mask": mask}
            mean_pool(sessions[spec].run(["hidden"], feed)[0], mask)
        took = (time.perf_counter() - start, time.process_time() - cpu)
        times.setdefault((spec, batch), []).append(took)
    print(f"facts corpus, {len(texts)} items x {args.repeats} interleaved rounds, one process")
    print(f"{'intra-op':>8}{'spin':>5}{'opt':>6}{'batch':>6}{'items/s':>8}{'cpu ms/item':>12}")
    for (spec, batch), runs in times.items():
        wall, cpu = (statistics.median(x[i] for x in runs) for i in (0, 1))
        print(f"{spec[0]:>8}{spec[1]:>5}{spec[2]:>6}{batch:>6}{len(texts) / wall:>8.0f}", end="")
        print(f"{cpu / len(texts) * 1000:>12.2f}")
    return 0


INT8_PLANS: dict[str, tuple[str, ...]] = {
    "all int8": (),
    "f32 down L0": ("l0.down",),
    "f32 down L0-3": tuple(f"l{i}.down" for i in range(4)),
    "f32 down": tuple(f"l{i}.down" for i in range(6)),
    "f32 down+qkv L4-5": (*(f"l{i}.down" for i in range(6)), "l4.qkv", "l5.qkv"),
}
"""Products kept in float32 (the rest in int8): the accuracy / speed curve of ``--int8-plans``."""


def _long_texts(n: int, seed: int = 4) -> list[str]:
    """``n`` texts of 3-25 LoCoMo turns joined: long inputs, many truncated at 256 tokens."""
    rng, pool = random.Random(seed), _turns("locomo")
    return [" ".join(rng.sample(pool, rng.randint(3, 25))) for _ in range(n)]


def _run_encoder(encoder: Any, encodings: list[list[int]], batch: int) -> Any:
    from engram.recall._local import mean_pool, pad_batch

    out = np.zeros((len(encodings), 384), dtype=np.float32)
    for rows in length_batches([len(e) for e in encodings], batch):
        ids, mask = pad_batch([encodings[i] for i in rows])
        out[rows] = mean_pool(encoder(ids, mask), mask)
    return out


def int8_plans(args: argparse.Namespace) -> int:
    """float32 and int8 plans side by side in ONE process: CPU per item and cosines."""
    from engram.recall._bert import BertWeights
    from engram.recall._local import int8_plan
    from engram.recall._onnx import OnnxEncoder

    model_dir = locate_model_dir()
    weights, tokenizer = BertWeights.load(model_dir), load_tokenizer(model_dir)
    encoders = {"float32": OnnxEncoder(weights, 1)}
    for name, keep in INT8_PLANS.items():
        encoders[name] = OnnxEncoder(weights, 1, int8=int8_plan(weights, model_dir, keep))
    facts_ids = [e.ids for e in tokenizer.encode_batch(corpus("facts", args.items))]
    cpu: dict[str, list[float]] = {name: [] for name in encoders}
    for _, (name, encoder) in itertools.product(range(args.repeats), encoders.items()):
        start = time.process_time()
        _run_encoder(encoder, facts_ids, 32)
        cpu[name].append((time.process_time() - start) / len(facts_ids))
    sample = diverse(args.agreement) + _long_texts(args.agreement // 2)
    reference = _torch(1, 32)(sample)
    sample_ids = [e.ids for e in tokenizer.encode_batch(sample)]
    base = statistics.median(cpu["float32"])
    print(f"facts: {len(facts_ids)} items x {args.repeats} interleaved rounds, one process,")
    print(f"one thread; cosines over {len(sample)} texts (4 corpora + long texts)")
    print(f"{'plan':<20}{'cpu ms/item':>12}{'ratio':>7}{'cos min':>9}{'p1':>8}{'mean':>8}")
    for name, encoder in encoders.items():
        cosines = (_run_encoder(encoder, sample_ids, 32) * reference).sum(axis=1)
        per_item = statistics.median(cpu[name])
        print(f"{name:<20}{per_item * 1000:>12.2f}{per_item / base:>7.3f}", end="")
        print(f"{cosines.min():>9.4f}{np.percentile(cosines, 1):>8.4f}{cosines.mean():>8.4f}")
    return 0


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench embedders",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--items", type=int, default=1000, help="texts embedded per round")
    parser.add_argument("--queries", type=int, default=50, help="single-query embeddings per round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per runtime")
    parser.add_argument("--threads", default="1,2", help="thread counts to try (comma list)")
    parser.add_argument("--batch", default="32", help="batch sizes to try (comma list)")
    parser.add_argument(
        "--runtimes",
        default="numpy,onnx,onnx-int8,torch",
        help="numpy, onnx, onnx-int8, torch, hash",
    )
    parser.add_argument("--corpus", default="facts", help="facts, cold, locomo, longmemeval")
    parser.add_argument("--ort-options", action="store_true", help="compare onnxruntime options")
    parser.add_argument(
        "--int8-plans", action="store_true", help="float32 vs int8 plans: CPU and cosines"
    )
    parser.add_argument(
        "--agreement", type=int, default=100, help="texts per corpus for --int8-plans cosines"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    if args.worker:
        return _worker(args)
    if args.ort_options:
        return ort_options(args)
    if args.int8_plans:
        return int8_plans(args)
    specs = [
        f"{name}:{threads}:{batch}:{kind}"
        for kind in _csv(args.corpus)
        for threads in _csv(args.threads)
        for batch in _csv(args.batch)
        for name in _csv(args.runtimes)
    ]
    results = [_spawn(spec, args) for spec in specs]
    runtimes, samples = [r for r, _ in results], [s for _, s in results]
    _agreement(runtimes, samples)
    load = os.getloadavg()
    print(f"{args.items} texts x {args.repeats} rounds; load average {load[0]:.1f}, ", end="")
    print(f"{os.cpu_count()} cores")
    report(runtimes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
