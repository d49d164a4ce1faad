"""Hot tier: durable thread checkpoints through LangGraph's official savers.

``open_checkpointer(url)`` (sync) and ``aopen_checkpointer(url)`` (async) are
context managers yielding a ready ``BaseCheckpointSaver`` for
``builder.compile(checkpointer=...)``. The URL picks the saver:
``sqlite:///.engram/checkpoints.db`` (default), ``postgresql://...``, ``memory://``.

Safe by default: values load through a strict allow-list
(:class:`~engram.stores._hot_serde.StrictSerializer`), and when
``ENGRAM_ENCRYPTION_KEY`` is set (or ``encryption_key=`` is given) every
checkpoint, write and blob is sealed with AES-GCM. :class:`Threads` /
:class:`AsyncThreads` add listing per user, history, diff, fork, retention
and sizes on top of the saver.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Final, get_args

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import Durability

from engram.backends.memory.hot import EngramMemorySaver
from engram.config import StoreURL, default_url, parse_url
from engram.errors import ConfigError, InvalidInputError
from engram.stores._hot_model import (
    FORKED_FROM_KEY,
    TENANT_KEY,
    USER_KEY,
    ChannelChange,
    CheckpointInfo,
    ForkResult,
    PruneReport,
    StateDiff,
    ThreadInfo,
    ThreadSize,
    thread_config,
)
from engram.stores._hot_serde import (
    DEFAULT_ALLOWED_TYPES,
    ENCRYPTION_KEY_ENV,
    AesGcmCipher,
    StrictSerializer,
    TypeKey,
    build_serde,
    generate_key,
    key_from_env,
    parse_key,
    register_state_types,
)
from engram.stores._hot_threads import AsyncThreads, Threads

__all__ = [
    "DEFAULT_ALLOWED_TYPES",
    "DEFAULT_DURABILITY",
    "DURABILITY_MODES",
    "ENCRYPTION_KEY_ENV",
    "FORKED_FROM_KEY",
    "FROM_ENV",
    "TENANT_KEY",
    "USER_KEY",
    "AesGcmCipher",
    "AsyncThreads",
    "ChannelChange",
    "CheckpointInfo",
    "Durability",
    "ForkResult",
    "PruneReport",
    "StateDiff",
    "StrictSerializer",
    "ThreadInfo",
    "ThreadSize",
    "Threads",
    "aopen_checkpointer",
    "check_durability",
    "generate_key",
    "open_checkpointer",
    "register_state_types",
    "thread_config",
]

DURABILITY_MODES: Final[Mapping[Durability, str]] = {
    "exit": "write a checkpoint only when the run ends, pauses or fails: fastest, but a crash "
    "mid-run loses every step since the last pause",
    "async": "write each step's checkpoint in the background while the next step runs: a crash "
    "can lose the step in flight (LangGraph's default)",
    "sync": "write each step's checkpoint before the next step starts: slowest, no completed "
    "step is ever lost",
}
"""LangGraph's ``durability`` modes (``graph.invoke(..., durability=...)``), explained."""

DEFAULT_DURABILITY: Final[Durability] = "async"


def check_durability(value: str) -> Durability:
    """Validate a durability mode name (for config files, env vars, CLI options)."""
    for mode in get_args(Durability):
        if value == mode:
            return mode  # type: ignore[no-any-return]
    raise InvalidInputError(
        f"durability must be one of {', '.join(DURABILITY_MODES)}; got {value!r}"
    )


class _FromEnv:
    def __repr__(self) -> str:
        return "FROM_ENV"


FROM_ENV: Final = _FromEnv()
"""Default of ``encryption_key``: read ``ENGRAM_ENCRYPTION_KEY`` (unset means no encryption)."""

EncryptionKey = bytes | str | None | _FromEnv


@dataclass(frozen=True, slots=True)
class _Options:
    serde: SerializerProtocol | None
    sealed: bool


def _options(
    serde: SerializerProtocol | None,
    allowed_types: Iterable[type | TypeKey],
    encryption_key: EncryptionKey,
) -> _Options:
    if serde is not None:
        return _Options(serde, sealed=False)
    if isinstance(encryption_key, _FromEnv):
        key = key_from_env()
    else:
        key = None if encryption_key is None else parse_key(encryption_key)
    return _Options(build_serde(allowed=allowed_types, key=key), sealed=key is not None)


def _resolve(url: str | None) -> StoreURL:
    parsed = parse_url(url or default_url("hot"))
    if parsed.scheme == "redis":
        raise ConfigError(
            "the hot tier has no Redis saver yet; use sqlite://, postgresql:// or memory://"
        )
    return parsed


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
    parsed = _resolve(url)
    options = _options(serde, allowed_types, encryption_key)
    if parsed.scheme == "memory":
        yield EngramMemorySaver(serde=options.serde)
    elif parsed.scheme == "sqlite":
        from engram.backends.sqlite.hot import open_sync

        assert parsed.path is not None
        with open_sync(parsed.path, options.serde) as saver:
            yield saver
    else:
        from engram.backends.postgres.hot import open_sync as open_pg

        with open_pg(parsed.dsn, options.serde, sealed=options.sealed) as pg_saver:
            yield pg_saver


@asynccontextmanager
async def aopen_checkpointer(
    url: str | None = None,
    *,
    serde: SerializerProtocol | None = None,
    allowed_types: Iterable[type | TypeKey] = (),
    encryption_key: EncryptionKey = FROM_ENV,
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open the checkpoint saver named by ``url`` (async); options as :func:`open_checkpointer`."""
    parsed = _resolve(url)
    options = _options(serde, allowed_types, encryption_key)
    if parsed.scheme == "memory":
        yield EngramMemorySaver(serde=options.serde)
    elif parsed.scheme == "sqlite":
        from engram.backends.sqlite.hot import open_async

        assert parsed.path is not None
        async with open_async(parsed.path, options.serde) as saver:
            yield saver
    else:
        from engram.backends.postgres.hot import open_async as open_pg

        async with open_pg(parsed.dsn, options.serde, sealed=options.sealed) as pg_saver:
            yield pg_saver
