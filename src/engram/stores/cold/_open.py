"""Open a long-term store from a URL: ``sqlite:///…``, ``memory://``, ``postgresql://…``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from engram.config import default_url, parse_url
from engram.errors import ConfigError
from engram.stores.cold._backend import ColdBackend
from engram.stores.cold._store import LongTermStore


def backend_for(url: str | None = None) -> ColdBackend:
    """The (not yet set up) backend named by ``url`` (default: ``./.engram/memory.db``)."""
    parsed = parse_url(url or default_url("cold"))
    if parsed.scheme == "memory":
        from engram.backends.memory.cold import MemoryColdBackend

        return MemoryColdBackend()
    if parsed.scheme == "sqlite":
        from engram.backends.sqlite.cold import SQLiteColdBackend

        assert parsed.path is not None
        return SQLiteColdBackend(parsed.path)
    if parsed.scheme == "postgresql":
        from engram.backends.postgres.cold import PostgresColdBackend

        backend: ColdBackend = PostgresColdBackend(parsed.dsn)
        return backend
    raise ConfigError(
        f"the cold tier has no {parsed.scheme} backend; use sqlite, postgresql or memory"
    )


@contextmanager
def open_store(url: str | None = None, **options: Any) -> Iterator[LongTermStore]:
    """A set-up :class:`LongTermStore` on ``url``, closed on exit.

    ``options`` go to :class:`LongTermStore` (``embedder=``, ``options=``,
    ``resolver=``, ``policy=``, ``clock=``).
    """
    store = LongTermStore(backend_for(url), **options)
    store.setup()
    try:
        yield store
    finally:
        store.close()


@asynccontextmanager
async def aopen_store(url: str | None = None, **options: Any) -> AsyncIterator[LongTermStore]:
    """Async form of :func:`open_store` (set-up and close run in a worker thread)."""
    store = LongTermStore(backend_for(url), **options)
    await asyncio.to_thread(store.setup)
    try:
        yield store
    finally:
        await asyncio.to_thread(store.close)
