"""Open a checkpoint saver from a URL, and find the admin of a saver.

The one place under ``stores/hot`` that names a backend: :data:`ENGINES` maps a URL
scheme to a lazy loader of the backend module (a :class:`HotEngine`). Adding an engine
is one entry here plus its backend package.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Final

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from engram.config import AppRole, StoreURL, default_url, parse_url
from engram.errors import ConfigError
from engram.stores.hot.contract import HotAdmin, HotEngine, SaverOptions
from engram.stores.hot.serde import TypeKey, build_serde, key_from_env, parse_key


def _inproc() -> HotEngine:
    from engram.backends.inproc import hot

    return hot


def _sqlite() -> HotEngine:
    from engram.backends.sqlite import hot

    return hot


def _postgres() -> HotEngine:
    from engram.backends.postgres import hot

    return hot


def _redis() -> HotEngine:
    from engram.backends.redis import hot

    return hot


@dataclass(frozen=True, slots=True)
class Engine:
    """One row of the table: the backend's loader, and the LangGraph module its savers
    come from (an existing saver of that kind means the module is already imported)."""

    load: Callable[[], HotEngine]
    saver_module: str


ENGINES: Final[Mapping[str, Engine]] = {
    "memory": Engine(_inproc, "langgraph.checkpoint.memory"),
    "sqlite": Engine(_sqlite, "langgraph.checkpoint.sqlite"),
    "postgresql": Engine(_postgres, "langgraph.checkpoint.postgres"),
    "redis": Engine(_redis, "engram.backends.redis.hot"),
}
"""URL scheme -> hot-tier backend."""


def _postgres_setup(url: StoreURL, role: AppRole | None) -> str:
    from engram.backends.postgres import hot

    return hot.setup(url.dsn, role)


SETUPS: Final[Mapping[str, Callable[[StoreURL, AppRole | None], str]]] = {
    "postgresql": _postgres_setup,
}
"""URL scheme -> admin setup of a backend whose tier runs as a separate role."""


def setup_checkpointer(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the checkpoint schema as an admin; the URL the application opens
    (PostgreSQL: the application role's, default ``engram_app``, which row-level
    security applies to; any other backend: ``admin_url`` itself)."""
    parsed = parse_url(admin_url)
    found = SETUPS.get(parsed.scheme)
    return admin_url if found is None else found(parsed, role)


class _FromEnv:
    def __repr__(self) -> str:
        return "FROM_ENV"


FROM_ENV: Final = _FromEnv()
"""Default of ``encryption_key``: read ``ENGRAM_ENCRYPTION_KEY`` (unset means no encryption)."""

EncryptionKey = bytes | str | None | _FromEnv


def _options(
    serde: SerializerProtocol | None,
    allowed_types: Iterable[type | TypeKey],
    encryption_key: EncryptionKey,
) -> SaverOptions:
    if serde is not None:
        return SaverOptions(serde, sealed=False)
    if isinstance(encryption_key, _FromEnv):
        key = key_from_env()
    else:
        key = None if encryption_key is None else parse_key(encryption_key)
    return SaverOptions(build_serde(allowed=allowed_types, key=key), sealed=key is not None)


def _resolve(url: str | None) -> tuple[StoreURL, HotEngine]:
    parsed = parse_url(url or default_url("hot"))
    engine = ENGINES.get(parsed.scheme)
    if engine is None:
        known = ", ".join(f"{scheme}://" for scheme in ENGINES)
        raise ConfigError(f"the hot tier has no {parsed.scheme} backend; use {known}")
    return parsed, engine.load()


@contextmanager
def open_checkpointer(
    url: str | None = None,
    *,
    serde: SerializerProtocol | None = None,
    allowed_types: Iterable[type | TypeKey] = (),
    encryption_key: EncryptionKey = FROM_ENV,
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open the checkpoint saver named by ``url`` (sync).

    ``allowed_types`` extends the deserialisation allow-list (classes or
    ``(module, name)`` pairs); ``encryption_key`` (bytes, base64 or hex; by
    default ``$ENGRAM_ENCRYPTION_KEY``, ``None`` to disable) turns on AES-GCM.
    An explicit ``serde`` replaces both.
    """
    parsed, engine = _resolve(url)
    with engine.open_sync(parsed, _options(serde, allowed_types, encryption_key)) as saver:
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    url: str | None = None,
    *,
    serde: SerializerProtocol | None = None,
    allowed_types: Iterable[type | TypeKey] = (),
    encryption_key: EncryptionKey = FROM_ENV,
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open the checkpoint saver named by ``url`` (async); options as :func:`open_checkpointer`."""
    parsed, engine = _resolve(url)
    options = _options(serde, allowed_types, encryption_key)
    async with engine.open_async(parsed, options) as saver:
        yield saver


def admin_for(saver: BaseCheckpointSaver[Any]) -> HotAdmin:
    """The backend admin of a LangGraph saver (opened by engram or built by the caller).

    Only engines whose LangGraph saver module is loaded are asked: a saver of that kind
    cannot exist otherwise, and no other driver gets imported.
    """
    for engine in ENGINES.values():
        if engine.saver_module in sys.modules:
            admin = engine.load().admin_for(saver)
            if admin is not None:
                return admin
    raise ConfigError(f"engram cannot inspect a {type(saver).__name__}; open it with engram")
