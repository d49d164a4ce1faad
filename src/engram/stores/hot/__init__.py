"""Hot tier: durable thread checkpoints through LangGraph's official savers.

``open_checkpointer(url)`` (sync) and ``aopen_checkpointer(url)`` (async) are
context managers yielding a ready ``BaseCheckpointSaver`` for
``builder.compile(checkpointer=...)``. The URL picks the saver:
``sqlite:///.engram/checkpoints.db`` (default), ``postgresql://...``, ``memory://``.

Safe by default: values load through a strict allow-list
(:class:`~engram.stores.hot.serde.StrictSerializer`), and when
``ENGRAM_ENCRYPTION_KEY`` is set (or ``encryption_key=`` is given) every
checkpoint, write and blob is sealed with AES-GCM. :class:`Threads` /
:class:`AsyncThreads` add listing per user, history, diff, fork, retention
and sizes on top of the saver.

Backends implement :mod:`engram.stores.hot.contract`; ``_open.py`` is the one table
from URL scheme to backend.
"""

from langgraph.types import Durability

from engram.stores.hot._durability import DEFAULT_DURABILITY, DURABILITY_MODES, check_durability
from engram.stores.hot._open import (
    FROM_ENV,
    admin_for,
    aopen_checkpointer,
    open_checkpointer,
    setup_checkpointer,
)
from engram.stores.hot._threads import AsyncThreads, Threads
from engram.stores.hot.contract import (
    FORKED_FROM_KEY,
    TENANT_KEY,
    USER_KEY,
    ChannelChange,
    CheckpointInfo,
    ForkResult,
    HotAdmin,
    HotEngine,
    PruneReport,
    SaverOptions,
    StateDiff,
    ThreadInfo,
    ThreadSize,
    thread_config,
)
from engram.stores.hot.serde import (
    DEFAULT_ALLOWED_TYPES,
    ENCRYPTION_KEY_ENV,
    AesGcmCipher,
    StrictSerializer,
    generate_key,
    register_state_types,
)

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
    "HotAdmin",
    "HotEngine",
    "PruneReport",
    "SaverOptions",
    "StateDiff",
    "StrictSerializer",
    "ThreadInfo",
    "ThreadSize",
    "Threads",
    "admin_for",
    "aopen_checkpointer",
    "check_durability",
    "generate_key",
    "open_checkpointer",
    "register_state_types",
    "setup_checkpointer",
    "thread_config",
]
