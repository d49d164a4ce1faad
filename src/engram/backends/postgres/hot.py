"""Hot tier on PostgreSQL: LangGraph's own ``PostgresSaver`` / ``AsyncPostgresSaver``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from langgraph.checkpoint.serde.base import SerializerProtocol

from engram.errors import MissingDependencyError

try:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import dict_row
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc


@contextmanager
def open_sync(dsn: str, serde: SerializerProtocol | None) -> Iterator[PostgresSaver]:
    with Connection.connect(
        dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = PostgresSaver(conn, serde=serde)
        saver.setup()
        yield saver


@asynccontextmanager
async def open_async(
    dsn: str, serde: SerializerProtocol | None
) -> AsyncIterator[AsyncPostgresSaver]:
    async with await AsyncConnection.connect(
        dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = AsyncPostgresSaver(conn, serde=serde)
        await saver.setup()
        yield saver
