"""Hot tier on SQLite: LangGraph's own ``SqliteSaver`` / ``AsyncSqliteSaver`` on a file."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000")


def _prepare(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


@contextmanager
def open_sync(path: Path, serde: SerializerProtocol | None) -> Iterator[SqliteSaver]:
    with closing(sqlite3.connect(_prepare(path), check_same_thread=False)) as conn:
        for pragma in PRAGMAS:
            conn.execute(pragma)
        saver = SqliteSaver(conn, serde=serde)
        saver.setup()
        yield saver


@asynccontextmanager
async def open_async(
    path: Path, serde: SerializerProtocol | None
) -> AsyncIterator[AsyncSqliteSaver]:
    async with aiosqlite.connect(_prepare(path)) as conn:
        for pragma in PRAGMAS:
            await conn.execute(pragma)
        saver = AsyncSqliteSaver(conn, serde=serde)
        await saver.setup()
        yield saver
