"""Hot tier figures: the backends side by side, Redis durability, thread growth.

``python -m bench hot`` compares SQLite, PostgreSQL (embedded server) and Redis
(``redis-server`` started here, AOF with ``appendfsync always``, and ``everysec``):
median / p95 of one ``put`` and one ``get_tuple``, and the Market Analyst's time per
checkpointed step above an in-memory saver; ratios to SQLite. Then it SIGKILLs
``redis-server`` under a writer putting checkpoints as fast as it can, restarts it and
counts the acknowledged checkpoints lost, for ``everysec`` and ``always``.
``--no-postgres`` / ``--no-redis`` leave one out.

``python -m bench hot --url URL [--turns N] [--runs N]``: one backend's report: per
turn, the checkpoints and bytes a thread holds; the time to prune it; and the median /
p95 time of one graph run under each durability mode, strict and encrypted.
"""

from __future__ import annotations

import argparse
import itertools
import operator
import statistics
import time
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from engram.stores.hot import DURABILITY_MODES, Threads, generate_key, open_checkpointer


class _State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    draft: str


def _graph(saver: Any) -> Any:
    builder = StateGraph(_State)
    names = ("plan", "fetch", "analyse", "write")
    for name in names:
        builder.add_node(name, lambda s, n=name: {"log": [f"{n}: " + "x" * 300], "draft": n * 50})
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=saver)


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _growth(url: str, turns: int) -> None:
    print(f"growth of one thread ({url.split('://')[0]}), 6 checkpoints per turn:")
    with open_checkpointer(url, encryption_key=None) as saver:
        graph, threads = _graph(saver), Threads(saver)
        for turn in range(1, turns + 1):
            graph.invoke({"log": [f"turn {turn}"]}, _cfg("growth"))
            if turn in (1, 2, 5) or turn % 10 == 0 or turn == turns:
                s = threads.sizes(["growth"])[0]
                print(f"  turn {turn:3d}: {s.checkpoints:4d} checkpoints {s.writes:4d} writes "
                      f"{s.total_bytes / 1024:8.1f} KiB")  # fmt: skip
        start = time.perf_counter()
        report = threads.prune("growth", keep_last=10)
        took = (time.perf_counter() - start) * 1000
        kib = threads.sizes(["growth"])[0].total_bytes / 1024
        print(f"  prune to 10: deleted {report.deleted_checkpoints} checkpoints and "
              f"{report.deleted_writes} writes in {took:.1f} ms -> {kib:.1f} KiB")  # fmt: skip


def _runs(url: str, runs: int, key: str | None, durability: str) -> list[float]:
    times = []
    with open_checkpointer(url, encryption_key=key) as saver:
        graph = _graph(saver)
        for i in range(runs):
            start = time.perf_counter()
            graph.invoke({"log": ["go"]}, _cfg(f"run-{durability}-{key is None}-{i}"),
                         durability=durability)  # fmt: skip
            times.append((time.perf_counter() - start) * 1000)
    return times


def _durability(url: str, runs: int) -> None:
    print(f"one 4-node run ({runs} runs each), ms:")
    key = generate_key()
    _runs(url, 5, key, "sync")  # warm up imports, the serializer and the file
    for mode in DURABILITY_MODES:
        for label, k in (("strict", None), ("encrypted", key)):
            t = sorted(_runs(url, runs, k, mode))
            p95 = t[min(len(t) - 1, int(len(t) * 0.95))]
            print(f"  durability={mode:5s} {label:9s}: median {statistics.median(t):6.2f}"
                  f"  p95 {p95:6.2f}")  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hot")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--url", default=None, help="one backend's report on this URL")
    parser.add_argument("--ops", type=int, default=500, help="puts and gets per backend")
    parser.add_argument("--agent-runs", type=int, default=9)
    parser.add_argument("--kills", type=int, default=5, help="SIGKILL rounds per fsync mode")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-redis", action="store_true")
    args = parser.parse_args(argv)
    if args.url:
        _growth(args.url, args.turns)
        _durability(args.url, args.runs)
        return 0
    from bench._hot_compare import compare, redis_loss

    compare(args.ops, args.agent_runs, postgres=not args.no_postgres, redis=not args.no_redis)
    if not args.no_redis:
        redis_loss(args.kills)
    return 0
