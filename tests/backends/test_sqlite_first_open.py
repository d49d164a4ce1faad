"""Several processes opening the same new SQLite files at the same moment (server workers
starting on a fresh home) all succeed, on every embedded tier.

Two races did fail them: switching a new file to WAL mode answers "database is locked" at
once, whatever the busy timeout, while another process switches it; and the document
index read its schema version outside a write transaction, so two processes both created
its tables ("table doc_files already exists"). Each round starts the processes on new
files together (a barrier per tier); the rounds make the narrow window likely to be hit.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

PROCESSES = 3
ROUNDS = 25
WAIT_S = 240.0
"""How long the test waits for every process (each round takes milliseconds)."""


def _cold(folder: Path, i: int) -> None:
    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    with open_store(f"sqlite:///{folder}/memory.db", embedder=HashEmbedder(32)) as store:
        store.remember(Principal("acme", f"u{i}"), f"Fact {i}: likes green tea")


def _hot(folder: Path, i: int) -> None:
    from engram.stores.hot import open_checkpointer

    with open_checkpointer(f"sqlite:///{folder}/checkpoints.db") as saver:
        assert list(saver.list(None, limit=1)) == []


def _documents(folder: Path, i: int) -> None:
    from engram import Principal
    from engram.stores.documents import open_documents

    index = folder / "index" / "documents.db"
    user = Principal("acme", f"u{i}")
    with open_documents(str(folder / "documents"), index_path=index) as documents:
        documents.list(user)  # (reads the index first: no tenant lock around its setup)
        documents.write(user, f"users/u{i}/a.md", "hello\n")


def _keys(folder: Path, i: int) -> None:
    from engram.backends.sqlite.keys import SqliteKeyStore
    from engram.server.keys import Keyring

    Keyring(SqliteKeyStore(folder / "keys.db"), b"x" * 32).create("acme", user_id=f"u{i}")


def _audit(folder: Path, i: int) -> None:
    from engram.backends.sqlite.audit import SqliteErasureLog
    from engram.stores.audit.contract import ErasureRecord

    when = datetime(2026, 1, 1, tzinfo=UTC)
    SqliteErasureLog(folder / "audit.db").add(ErasureRecord("acme", f"u{i}", "t", when, {}))


def _outbox(folder: Path, i: int) -> None:
    from engram import Principal
    from engram.backends.sqlite.outbox import PublicationLedger

    PublicationLedger(folder / "outbox.db").publish(Principal("acme", f"u{i}"), "t", "r", "me")


TIERS: dict[str, Callable[[Path, int], None]] = {
    "cold": _cold,
    "hot": _hot,
    "documents": _documents,
    "keys": _keys,
    "audit": _audit,
    "outbox": _outbox,
}


def _worker(root: str, i: int, barrier: Barrier, results: Any) -> None:
    """Open every tier on the files of each round, at the moment the others do; report
    each failure (and "done" at the end)."""
    for tier, open_tier in TIERS.items():  # imports first: the rounds race on opening only
        open_tier(Path(root) / "warm" / tier / str(i), i)
    for r in range(ROUNDS):
        for tier, open_tier in TIERS.items():
            barrier.wait(timeout=WAIT_S)
            try:
                open_tier(Path(root) / f"round{r}" / tier, i)
            except Exception as exc:  # noqa: BLE001 - reported: the test fails on any
                results.put(f"{tier} round {r}: {exc!r} <- {exc.__cause__!r}")
                traceback.print_exc()
    results.put("done")


def test_processes_opening_new_files_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    workers = [
        context.Process(target=_worker, args=(str(tmp_path), i, barrier, results))
        for i in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    reports: list[str] = []
    try:
        while reports.count("done") < PROCESSES:
            reports.append(results.get(timeout=WAIT_S))
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()
    assert [r for r in reports if r != "done"] == []
    assert all(worker.exitcode == 0 for worker in workers)


def test_a_document_index_that_fails_to_open_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its setup fails: a ``BackendError``, and no half-prepared connection left open
    (nor kept: the next call opens the file afresh)."""
    import sqlite3

    from engram.backends.files import _index
    from engram.errors import BackendError

    opened: list[sqlite3.Connection] = []
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(real_connect(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(_index, "_VERSION_TABLE", "CREATE TABLE doc_index_version (")
    index = _index.DocumentIndex(tmp_path / "index.db")
    with pytest.raises(BackendError):
        index.files("acme")
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")
    monkeypatch.undo()
    assert index.files("acme") == {}
