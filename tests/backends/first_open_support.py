"""The workers of ``test_sqlite_first_open``: a module of its own, so that processes
started with ``spawn`` import it by name (test modules are imported by path)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

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


def worker_of_rounds(root: str, i: int, barrier: Barrier, results: Any) -> None:
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
