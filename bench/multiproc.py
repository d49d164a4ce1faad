"""Several processes on one SQLite cold store: searchers alone, then with a writer.

    .venv/bin/python -m bench multiproc                      # 100k items, 4 searchers
    .venv/bin/python -m bench multiproc --size 1m --seconds 30
    .venv/bin/python -m bench multiproc --store DIR/engram.db   # an existing store

Every searcher is its own process (``bench._probe``) with the store opened
fresh: it searches every item (root prefix) and one user's items in turn, as
fast as it can, for ``--seconds``; then the same again while a fifth process
writes ``--rate`` items a second into the same store. Printed side by side: each
phase's search p50/p95 (query embedding included), the writer's write p95, and
each searcher's resident memory (private, and mapped files: the shared page
cache of the database and its vector index).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bench.cold import _chunks, _p95, corpus, make_embedder, parse_size, queries

ROOT_DIR = Path(__file__).resolve().parents[1]


class Probe:
    """One ``bench._probe`` process."""

    def __init__(self, url: str, embedder: str, mode: str = "exact") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench._probe", url, embedder, mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT_DIR,
        )
        self.open_ms = float(self._line().split()[1])

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the probe process ended early")
        return line

    def ask(self, command: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._line().strip()

    def ms(self, command: str) -> float:
        return float(self.ask(command))

    def rss_mb(self) -> tuple[float, float]:
        anon, mapped = self.ask("rss").split()
        return int(anon) / 1024, int(mapped) / 1024

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("exit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def build(path: Path, size: int, embedder: str) -> None:
    from engram.stores.cold import LongTermStore, backend_for

    items, _ = corpus(size)
    store = LongTermStore(backend_for(f"sqlite:///{path}"), embedder=make_embedder(embedder, 1))
    store.setup()
    start = time.perf_counter()
    for chunk in _chunks(items):
        store.put_many(chunk)
    print(f"built {size:,} items in {time.perf_counter() - start:.0f} s", flush=True)
    store.close()


def _search_for(probe: Probe, qs: Sequence[str], seconds: float, out: list[float]) -> None:
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end:
        scope = "all" if i % 2 == 0 else "user"
        out.append(probe.ms(f"q {scope} {qs[i % len(qs)]}"))
        i += 1


def _write_for(probe: Probe, seconds: float, rate: float, out: list[float]) -> None:
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end:
        tick = time.perf_counter()
        out.append(probe.ms(f"w mp{time.time_ns()}-{i} written while others search {i}"))
        i += 1
        time.sleep(max(0.0, 1 / rate - (time.perf_counter() - tick)))


def phase(
    searchers: Sequence[Probe], writer: Probe | None, qs: Sequence[str], args: argparse.Namespace
) -> tuple[list[list[float]], list[float]]:
    got: list[list[float]] = [[] for _ in searchers]
    writes: list[float] = []
    threads = [
        threading.Thread(target=_search_for, args=(p, qs, args.seconds, got[i]))
        for i, p in enumerate(searchers)
    ]
    if writer is not None:
        threads.append(
            threading.Thread(target=_write_for, args=(writer, args.seconds, args.rate, writes))
        )
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got, writes


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench multiproc", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--size", default="100k")
    parser.add_argument("--searchers", type=int, default=4)
    parser.add_argument("--rate", type=float, default=10.0, help="writes per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--store", type=Path, help="an existing SQLite cold store to use")
    args = parser.parse_args(list(argv))
    folder = None
    path = args.store
    if path is None:
        folder = tempfile.TemporaryDirectory(prefix="engram-bench-mp-")
        path = Path(folder.name) / "engram.db"
        build(path, parse_size(args.size), args.embedder)
    _, vocab = corpus(1000)
    qs = queries(vocab, 200)
    url = f"sqlite:///{path}"
    probes = [Probe(url, args.embedder) for _ in range(args.searchers)]
    writer = Probe(url, args.embedder)
    try:
        firsts = [p.ms(f"q all {qs[0]}") for p in probes]
        alone, _ = phase(probes, None, qs, args)
        rss = [p.rss_mb() for p in probes]
        busy, writes = phase(probes, writer, qs, args)
        rss_after = [p.rss_mb() for p in probes]
    finally:
        for p in (*probes, writer):
            p.close()
        if folder is not None:
            folder.cleanup()
    report(args, firsts, alone, busy, writes, rss, rss_after)
    return 0


def report(
    args: argparse.Namespace,
    firsts: Sequence[float],
    alone: Sequence[list[float]],
    busy: Sequence[list[float]],
    writes: Sequence[float],
    rss: Sequence[tuple[float, float]],
    rss_after: Sequence[tuple[float, float]],
) -> None:
    print(
        f"\n{args.searchers} searcher processes (every item and one user in turn), "
        f"{args.seconds:.0f} s per phase; ms, query embedding included"
    )
    print(f"{'phase':<22}{'searches':>9}{'p50':>9}{'p95':>9}{'writes':>8}{'write p95':>10}")
    a = [t for lat in alone for t in lat]
    b = [t for lat in busy for t in lat]
    print(
        f"{'searchers alone':<22}{len(a):>9}{statistics.median(a):>9.2f}{_p95(a):>9.2f}"
        f"{0:>8}{'-':>10}"
    )
    print(
        f"{f'+ writer {args.rate:g}/s':<22}{len(b):>9}{statistics.median(b):>9.2f}{_p95(b):>9.2f}"
        f"{len(writes):>8}{_p95(writes) if writes else 0:>10.2f}"
    )
    print(
        f"p95 with writer / alone: {_p95(b) / _p95(a):.2f}x; "
        f"first search per process: {', '.join(f'{f:.0f}' for f in firsts)} ms"
    )
    print(
        f"{'process':<10}{'anon MB':>9}{'mapped MB':>11}"
        f"{'anon MB after':>15}{'mapped MB after':>17}"
    )
    for i, ((anon, mapped), (anon2, mapped2)) in enumerate(zip(rss, rss_after, strict=True)):
        print(
            f"{'searcher ' + str(i):<10}{anon:>9.0f}{mapped:>11.0f}{anon2:>15.0f}{mapped2:>17.0f}"
        )
