"""Switching a SQLite file to WAL mode when other processes may be opening it too.

``PRAGMA journal_mode=WAL`` needs the file's exclusive lock; while another connection
holds it (another process switching the same fresh file at the same moment), SQLite
answers ``SQLITE_BUSY`` at once instead of calling the busy handler, so a
``busy_timeout`` does not help: several processes starting on a new home would fail with
"database is locked". The switch is tried again, for :data:`WAL_WAIT_S` at most.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiosqlite

WAL = "PRAGMA journal_mode=WAL"
WAL_WAIT_S = 30.0
"""How long a connection keeps trying to switch the file to WAL mode."""


def busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is ``SQLITE_BUSY`` (any extended form): another connection holds a
    lock it needs."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


def _pauses(seconds: float = WAL_WAIT_S) -> Iterator[float]:
    """The pauses between attempts (1 ms, doubling up to 50 ms) until ``seconds`` passed."""
    deadline, pause = time.monotonic() + seconds, 0.001
    while time.monotonic() < deadline:
        yield pause
        pause = min(pause * 2, 0.05)


def enable_wal(conn: sqlite3.Connection) -> None:
    """Put ``conn``'s file in WAL mode, waiting while other connections hold its lock."""
    for pause in _pauses():
        try:
            conn.execute(WAL)
            return
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                raise
        time.sleep(pause)
    conn.execute(WAL)  # (the last attempt: its error is the caller's)


async def enable_wal_async(conn: aiosqlite.Connection) -> None:
    """:func:`enable_wal` on an ``aiosqlite`` connection."""
    for pause in _pauses():
        try:
            await conn.execute(WAL)
            return
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                raise
        await asyncio.sleep(pause)
    await conn.execute(WAL)
