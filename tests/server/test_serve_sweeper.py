"""``engram serve`` deletes expired facts: each worker sweeps every ``--sweep-every`` seconds.

An expired fact is never served; without a sweep its row would stay on disk for as long
as the server runs. Real server processes (two workers) over a home, real clock.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from serve_support import start

from engram import Memory, Principal
from engram.cli import main as cli
from engram.recall import HashEmbedder
from engram.server.app import CONFIG_ENV, SWEEP_SECONDS, ServeConfig
from engram.stores.cold import open_store

ALICE = Principal("acme", "alice")
EXPIRING = "visiting the Lisbon office this week"


def _rows(home: Path, text: str) -> int:
    with sqlite3.connect(home / "memory.db") as conn:
        query = "SELECT count(*) FROM cold_memories WHERE text LIKE ?"
        return int(conn.execute(query, (f"%{text}%",)).fetchone()[0])


def _write(home: Path, ttl: timedelta) -> None:
    """A home with a lasting fact and one expiring after ``ttl`` (written to its cold
    store directly: the layer's write policy accepts no TTL under a day)."""
    with Memory.open(home, embedder="hash") as memory:
        memory.remember(ALICE, "Alice sails on Sundays", slot="hobby")
    with open_store(f"sqlite:///{home / 'memory.db'}", embedder=HashEmbedder()) as store:
        assert store.remember(ALICE, f"Alice is {EXPIRING}", ttl=ttl).action == "added"


def test_served_workers_delete_a_fact_once_it_expires(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    _write(home, timedelta(days=1))  # (the home, before the server opens it)
    server = start(
        ["--home", str(home), "--embedder", "hash", "--workers", "2", "--sweep-every", "0.2"],
        cwd=tmp_path,
    )
    try:
        with open_store(f"sqlite:///{home / 'memory.db'}", embedder=HashEmbedder()) as store:
            added = store.remember(ALICE, "Alice is in Porto today", ttl=timedelta(seconds=3))
            assert added.action == "added"
            assert _rows(home, "in Porto today") == 1
        deadline = time.monotonic() + 30
        while _rows(home, "in Porto today") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _rows(home, "in Porto today") == 0
        assert _rows(home, EXPIRING) == 1  # what has not expired stays
        assert _rows(home, "sails on Sundays") == 1
    finally:
        server.stop()


def test_a_server_told_never_to_sweep_keeps_the_expired_row(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    _write(home, timedelta(seconds=1))
    server = start(["--home", str(home), "--embedder", "hash", "--sweep-every", "0"], cwd=tmp_path)
    try:
        time.sleep(2.5)
        assert _rows(home, EXPIRING) == 1
    finally:
        server.stop()


def test_the_sweep_interval_defaults_to_an_hour_and_refuses_a_negative_one() -> None:
    assert ServeConfig().sweep_seconds == SWEEP_SECONDS == 3600.0
    result = CliRunner().invoke(cli, ["serve", "--sweep-every", "-1"])
    assert result.exit_code == 2 and "--sweep-every" in result.output


@pytest.mark.parametrize("seconds", [0.0, 0.5])
def test_the_config_carries_the_interval_to_every_worker(
    seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, ServeConfig(home="h", sweep_seconds=seconds).to_env())
    assert ServeConfig.from_env().sweep_seconds == seconds
