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
from pathlib import Path
from typing import Any

import pytest
from first_open_support import WAIT_S, worker_of_rounds

PROCESSES = 3


def test_processes_opening_new_files_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    workers = [
        context.Process(target=worker_of_rounds, args=(str(tmp_path), i, barrier, results))
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
