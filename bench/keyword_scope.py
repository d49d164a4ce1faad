"""SQLite keyword search within a prefix, with and without the index's scope tokens.

    .venv/bin/python -m bench keyword_scope                      # 100k items
    .venv/bin/python -m bench keyword_scope --size 1m
    .venv/bin/python -m bench keyword_scope --store DIR/engram.db  # an existing bench store

On one store of ``bench cold``'s corpus (100 users), each query runs four ways in
turn (each way first for a quarter of the queries: the first reads the pages cold), so
a noisy spell of the machine falls on all of them: the keyword search reading
the row of every match to test it (``read``, how it ran before), the index ranking
every match first and only the best rows read (``rank``), the index intersecting the
matches with the prefix's scope token (``scope``), and what the backend chooses
(``auto``); for the whole store (root prefix) and for one user. Then the whole
``store.search`` (vector leg and fusion included, hash embedder) for each prefix.
Printed: p50/p95 ms of each, and for how many queries the four returned the same rows.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

from bench.cold import ROOT, USER, _engram_load, _p95, corpus, make_embedder, parse_size, queries


def _build(path: Path, size: int) -> None:
    items, _ = corpus(size)
    store, seconds = _engram_load(f"sqlite:///{path}", items, make_embedder("hash", 1))
    print(f"loaded {size:,} items in {seconds:.0f} s", flush=True)
    store.close()


def _ms(fn: Callable[..., object], *args: object, **kwargs: object) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - started) * 1e3, out


WAYS: dict[str, dict[str, bool | None]] = {
    "read": {"_scoped": False, "_ranked_first": None},
    "rank": {"_scoped": False},
    "scope": {"_scoped": True},
    "auto": {},
}
"""Each way: the backend's choices it fixes (a method and the answer it then gives;
``_ranked_first`` None: every match's row read)."""


def _fixed(cls: type, answers: dict[str, bool | None]) -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    for name, answer in answers.items():
        stack.enter_context(mock.patch.object(cls, name, return_value=answer))
    return stack


def measure(path: Path, qs: Sequence[str]) -> None:
    from engram.backends.sqlite.cold import SQLiteColdBackend
    from engram.stores.cold import LongTermStore, backend_for
    from engram.stores.cold.contract import Scan
    from engram.stores.cold.records import View

    started = time.perf_counter()
    store = LongTermStore(backend_for(f"sqlite:///{path}"), embedder=make_embedder("hash", 1))
    store.setup()  # (an older store's keyword index is rebuilt here, once)
    print(f"opened in {time.perf_counter() - started:.1f} s", flush=True)
    backend = store.backend
    assert isinstance(backend, SQLiteColdBackend)
    print("keyword search (k=40), ms")
    print(f"{'prefix':10} {'way':5} {'p50':>8} {'p95':>8}  same rows")
    for name, prefix in (("all", ROOT), ("one user", USER)):
        scan = Scan(prefix, View(now=datetime.now(UTC)))
        lat: dict[str, list[float]] = {way: [] for way in WAYS}
        same = 0
        ways = list(WAYS.items())
        for n, q in enumerate(qs):
            got = {}
            for way, answers in ways[n % 4 :] + ways[: n % 4]:  # each way first in turn
                with _fixed(SQLiteColdBackend, answers):
                    ms, got[way] = _ms(backend.keyword_candidates, scan, q, 40)
                lat[way].append(ms)
            same += all(v == got["read"] for v in got.values())
        for way, values in lat.items():
            p50, p95 = statistics.median(values), _p95(values)
            print(f"{name:10} {way:5} {p50:8.2f} {p95:8.2f}  {same}/{len(qs)}")
    print("store.search (k=10, hash query embedding included; after a first search), ms")
    store.search(ROOT, query=qs[0], limit=10)  # the vector index's first read
    for name, prefix in (("all", ROOT), ("one user", USER)):
        values = [_ms(store.search, prefix, query=q, limit=10)[0] for q in qs]
        print(f"{name:10} {'auto':5} {statistics.median(values):8.2f} {_p95(values):8.2f}")
    store.close()


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench keyword_scope")
    parser.add_argument("--size", default="100k")
    parser.add_argument("--store", type=Path, help="an existing store of bench cold's corpus")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(list(argv))
    _, vocab = corpus(1)
    qs = queries(vocab, args.queries)
    if args.store is not None:
        measure(args.store, qs)
        return 0
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as folder:
        path = Path(folder) / "engram.db"
        _build(path, parse_size(args.size))
        measure(path, qs)
    return 0
