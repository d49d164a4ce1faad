"""Helpers for the Market Analyst tests: real processes on real SQLite files."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from engram import Principal

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

PRINCIPAL = Principal("acme", "alice")
REQUEST = "Compare NVDA and AMD"
_ENGRAM_VARS = (
    "ENGRAM_HOME",
    "ENGRAM_HOT_URL",
    "ENGRAM_AGENT_MODEL",
    "ENGRAM_TENANT",
    "ENGRAM_USER",
)


def child_env(**extra: str) -> dict[str, str]:
    """The test's environment without engram settings or crash hooks, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_AGENT_")}
    for name in _ENGRAM_VARS:
        env.pop(name, None)
    env.update(extra)
    return env


def cli_args(home: Path, *args: str) -> list[str]:
    """``python -m engram agent ARGS`` for ``PRINCIPAL`` on ``home``."""
    base = [sys.executable, "-m", "engram", "agent", *args, "--home", str(home)]
    return [*base, "--tenant", PRINCIPAL.tenant_id, "--user", PRINCIPAL.user_id]


def make_cli(cwd: Path) -> CliRunner:
    """A function running one ``engram agent`` command in a new Python process."""

    def run(
        home: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            cli_args(home, *args),
            capture_output=True,
            text=True,
            env=child_env(**(env or {})),
            cwd=cwd,
            timeout=120,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{args} exited {done.returncode}: {done.stderr}")
        return done

    return run


def ledger_rows(home: Path) -> list[tuple[str, str, str]]:
    """``(idempotency_key, thread_id, published_at)`` of every row in the outbox file."""
    path = home / "outbox.db"
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        query = "SELECT idempotency_key, thread_id, published_at FROM publications"
        return conn.execute(query).fetchall()


def kill_at(home: Path, tmp_path: Path, point: str, *args: str) -> Path:
    """Start ``engram agent ARGS`` with a hold at ``point``, SIGKILL it there; return the trace."""
    marker, trace = tmp_path / f"hold-{point}", tmp_path / "trace.log"
    env = child_env(
        ENGRAM_AGENT_HOLD=point, ENGRAM_AGENT_HOLD_FILE=str(marker), ENGRAM_AGENT_TRACE=str(trace)
    )
    child = subprocess.Popen(
        cli_args(home, *args, "--json"),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, (
                f"child exited early: {child.stderr and child.stderr.read()}"
            )
            assert time.monotonic() < deadline, f"the child never reached {point}"
            time.sleep(0.05)
        assert int(marker.read_text()) == child.pid
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return trace
