"""The hot-tier backends side by side, and what SIGKILL of redis-server loses (see
:mod:`bench.hot`)."""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

from bench._hot_servers import Redis, acknowledged_then_killed
from engram import Principal
from engram.stores.hot import open_checkpointer, thread_config

PRINCIPAL = Principal("acme", "bench")
REQUEST = "Compare NVDA and AMD"
KILL_AFTER = (0.5, 0.8, 1.1, 1.4, 1.7)
"""Seconds of writing before each SIGKILL (cycled)."""


def _ms(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95)] * 1000


def _timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _checkpoint(step: int) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"log": [f"step {step}: " + "x" * 300] * 4, "draft": "d" * 200}
    checkpoint["channel_versions"] = {"log": f"{step:032}.0", "draft": f"{step:032}.0"}
    return checkpoint


def saver_ops(url: str, ops: int) -> dict[str, list[float]]:
    """Seconds per ``put`` (scoped to a principal, as engram's writes are), per latest
    ``get_tuple`` and per ``get_tuple`` of an older checkpoint, on one thread."""
    times: dict[str, list[float]] = {"put": [], "get latest": [], "get by id": []}
    with open_checkpointer(url, encryption_key=None) as saver:
        config = thread_config("bench-ops", PRINCIPAL, checkpoint_ns="")
        ids = []
        for step in range(ops):
            checkpoint, metadata = _checkpoint(step), {"step": step, "source": "loop"}
            start = time.perf_counter()
            config = saver.put(config, checkpoint, metadata, {})  # type: ignore[arg-type]
            times["put"].append(time.perf_counter() - start)
            ids.append(checkpoint["id"])
        latest = thread_config("bench-ops", checkpoint_ns="")
        for step in range(ops):
            times["get latest"].append(_timed(lambda: saver.get_tuple(latest)))
            older = thread_config("bench-ops", checkpoint_ns="", checkpoint_id=ids[step // 2])
            times["get by id"].append(_timed(lambda c=older: saver.get_tuple(c)))  # type: ignore[misc]
    return times


def agent_medians(urls: dict[str, str], tmp: Path, runs: int) -> tuple[dict[str, float], int]:
    """Median seconds of one Market Analyst run (request to awaiting approval) per backend,
    the backends taking turns run after run; and the checkpoints one run writes."""
    from engram.agent import MarketAnalyst

    analysts = {
        name: MarketAnalyst(home=tmp / f"agent-{i}", hot_url=url)
        for i, (name, url) in enumerate(urls.items())
    }
    times: dict[str, list[float]] = {name: [] for name in urls}
    for i in range(runs + 1):  # the first round warms up
        for name, analyst in analysts.items():
            thread = f"run-{i}"
            took = _timed(lambda a=analyst, t=thread: a.run(PRINCIPAL, REQUEST, thread_id=t))
            times[name] += [took] if i else []
    steps = len(analysts["sqlite"].history(PRINCIPAL, "run-0"))
    return {name: statistics.median(t) for name, t in times.items()}, steps


@contextlib.contextmanager
def _backends(tmp: Path, postgres: bool, redis: bool) -> Iterator[dict[str, str]]:
    urls = {"sqlite": f"sqlite:///{tmp / 'compare.db'}"}
    with contextlib.ExitStack() as stack:
        if postgres:
            from bench.cold import postgres as pg_server

            fresh = stack.enter_context(pg_server("embedded"))
            assert fresh is not None
            urls["postgres"] = fresh("hot")
        if redis:
            for fsync in ("always", "everysec"):
                server = Redis(tmp / f"redis-{fsync}", fsync).start()
                stack.callback(server.stop)
                urls[f"redis ({fsync})"] = server.url
            print(f"Redis server {server.version()}, AOF on, no RDB snapshots")
        yield urls


WIDTH = 17


def _row(label: str, values: dict[str, float], unit: str) -> None:
    cells = "".join(f"{v:{WIDTH}.3f}" for v in values.values())
    print(f"  {label:30s}{cells}  {unit}")


def compare(ops: int, agent_runs: int, *, postgres: bool, redis: bool) -> None:
    with tempfile.TemporaryDirectory() as folder, _backends(Path(folder), postgres, redis) as urls:
        tmp = Path(folder)
        print(f"hot tier backends side by side ({ops} puts and gets each, one thread):")
        print(f"  {'':30s}" + "".join(f"{name:>{WIDTH}s}" for name in urls))
        measured = {name: saver_ops(url, ops) for name, url in urls.items()}
        for op in ("put", "get latest", "get by id"):
            _row(f"{op} median", {n: _ms(m[op])[0] for n, m in measured.items()}, "ms")
            _row(f"{op} p95", {n: _ms(m[op])[1] for n, m in measured.items()}, "ms")
        runs, steps = agent_medians({**urls, "memory": "memory://"}, tmp, agent_runs)
        base = runs.pop("memory")
        _row("agent run median", {n: r * 1000 for n, r in runs.items()}, "ms")
        overhead = {n: (r - base) * 1000 / steps for n, r in runs.items()}
        _row("agent per step, above memory", overhead, f"ms ({steps} checkpoints per run)")
        print(f"  (the same run on memory:// : {base * 1000:.1f} ms)")
        sqlite = {op: _ms(measured["sqlite"][op])[0] for op in ("put", "get latest")}
        for op, ref in sqlite.items():
            _row(f"{op} / sqlite", {n: _ms(m[op])[0] / ref for n, m in measured.items()}, "x")
        step_ref = overhead["sqlite"]
        _row("per step / sqlite", {n: v / step_ref for n, v in overhead.items()}, "x")


def _stored(url: str) -> set[str]:
    with open_checkpointer(url, encryption_key=None) as saver:
        found = saver.list({"configurable": {"thread_id": "loop", "checkpoint_ns": ""}})
        return {t.config["configurable"]["checkpoint_id"] for t in found}


def redis_loss(kills: int) -> None:
    """SIGKILL redis-server under a writer; count the acknowledged checkpoints lost."""
    print(f"SIGKILL of redis-server under a checkpoint writer ({kills} rounds per mode):")
    for fsync in ("everysec", "always"):
        lost, acked, rates = 0, 0, []
        for i in range(kills):
            with tempfile.TemporaryDirectory() as folder:
                server = Redis(Path(folder) / "redis", fsync).start()
                ids, rate = acknowledged_then_killed(server, KILL_AFTER[i % len(KILL_AFTER)])
                server.start()
                try:
                    lost += len(set(ids) - _stored(server.url))
                finally:
                    server.stop()
                acked, rates = acked + len(ids), [*rates, rate]
        rate = statistics.median(rates)
        print(f"  appendfsync {fsync:8s}: {acked} acknowledged, {lost} lost; "
              f"{rate:.0f} acknowledged checkpoints/s")  # fmt: skip
        if fsync == "everysec":
            print("    on an OS crash or power loss (not a process kill) up to ~1-2 s of writes"
                  f" may go: ~{rate:.0f}-{2 * rate:.0f} checkpoints at this rate")  # fmt: skip
