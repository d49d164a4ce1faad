"""Hot tier: durable thread checkpoints through LangGraph's official savers.

``open_checkpointer(url)`` (sync) and ``aopen_checkpointer(url)`` (async) are
context managers yielding a ready ``BaseCheckpointSaver`` for
``builder.compile(checkpointer=...)``. The URL picks the saver:
``sqlite:///.engram/checkpoints.db`` (default), ``postgresql://...``, ``memory://``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from engram.config import StoreURL, default_url, parse_url
from engram.errors import ConfigError


def _resolve(url: str | None) -> StoreURL:
    parsed = parse_url(url or default_url("hot"))
    if parsed.scheme == "redis":
        raise ConfigError(
            "the hot tier has no Redis saver yet; use sqlite://, postgresql:// or memory://"
        )
    return parsed


@contextmanager
def open_checkpointer(
    url: str | None = None, *, serde: SerializerProtocol | None = None
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open the checkpoint saver named by ``url`` (sync)."""
    parsed = _resolve(url)
    if parsed.scheme == "memory":
        yield InMemorySaver(serde=serde)
    elif parsed.scheme == "sqlite":
        from engram.backends.sqlite.hot import open_sync

        assert parsed.path is not None
        with open_sync(parsed.path, serde) as saver:
            yield saver
    else:
        from engram.backends.postgres.hot import open_sync as open_pg

        with open_pg(parsed.dsn, serde) as pg_saver:
            yield pg_saver


@asynccontextmanager
async def aopen_checkpointer(
    url: str | None = None, *, serde: SerializerProtocol | None = None
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open the checkpoint saver named by ``url`` (async)."""
    parsed = _resolve(url)
    if parsed.scheme == "memory":
        yield InMemorySaver(serde=serde)
    elif parsed.scheme == "sqlite":
        from engram.backends.sqlite.hot import open_async

        assert parsed.path is not None
        async with open_async(parsed.path, serde) as saver:
            yield saver
    else:
        from engram.backends.postgres.hot import open_async as open_pg

        async with open_pg(parsed.dsn, serde) as pg_saver:
            yield pg_saver
