"""Open a long-term store from a URL: ``sqlite:///…``, ``memory://``, ``postgresql://…``.

The one place under ``stores/cold`` that names a backend: :data:`ENGINES` maps a URL
scheme to a lazy constructor of the backend. Adding an engine is one entry here plus
its backend package.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final

from engram.config import AppRole, StoreURL, default_url, parse_url
from engram.errors import ConfigError
from engram.stores.cold._store import LongTermStore
from engram.stores.cold.contract import ColdBackend


def _inproc(url: StoreURL) -> ColdBackend:
    from engram.backends.inproc.cold import InProcColdBackend

    return InProcColdBackend()


def _sqlite(url: StoreURL) -> ColdBackend:
    from engram.backends.sqlite.cold import SQLiteColdBackend

    assert url.path is not None
    return SQLiteColdBackend(url.path)


def _postgres(url: StoreURL) -> ColdBackend:
    from engram.backends.postgres.cold import PostgresColdBackend

    return PostgresColdBackend(url.dsn)


def _qdrant(url: StoreURL) -> ColdBackend:
    from engram.backends.qdrant.cold import QdrantColdBackend

    return QdrantColdBackend.from_url(url.raw)


ENGINES: Final[Mapping[str, Callable[[StoreURL], ColdBackend]]] = {
    "memory": _inproc,
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "qdrant": _qdrant,
}
"""URL scheme -> cold-tier backend (not yet set up)."""


def _postgres_setup(url: StoreURL, role: AppRole | None) -> str:
    from engram.backends.postgres.cold import setup

    return setup(url.dsn, role)


SETUPS: Final[Mapping[str, Callable[[StoreURL, AppRole | None], str]]] = {
    "postgresql": _postgres_setup,
}
"""URL scheme -> admin setup of a backend whose tier runs as a separate role."""


def setup_store(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the cold schema as an admin; the URL the application opens
    (PostgreSQL: the application role's, default ``engram_app``, which row-level
    security applies to; any other backend: ``admin_url`` itself)."""
    parsed = parse_url(admin_url)
    found = SETUPS.get(parsed.scheme)
    return admin_url if found is None else found(parsed, role)


def backend_for(url: str | None = None) -> ColdBackend:
    """The (not yet set up) backend named by ``url`` (default: ``./.engram/memory.db``)."""
    parsed = parse_url(url or default_url("cold"))
    engine = ENGINES.get(parsed.scheme)
    if engine is None:
        raise ConfigError(
            f"the cold tier has no {parsed.scheme} backend; use {', '.join(sorted(ENGINES))}"
        )
    return engine(parsed)


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
