"""engram: the memory layer of an AI agent.

Public names only; implementation modules are private. Every name but the errors is
imported on first use (PEP 562 ``__getattr__``), so ``import engram`` and the command line's
start load neither LangChain, LangGraph nor numpy.
"""

import importlib as _importlib
import typing as _typing

from engram.errors import (
    AccessDeniedError,
    BackendError,
    ConfigError,
    ConflictError,
    EmbeddingError,
    EmbeddingTimeoutError,
    EncryptionError,
    EngramError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    PathEscapeError,
    PolicyRejectedError,
    SerializationError,
    StaleWriteError,
    UnsafeDeserializationError,
)

if _typing.TYPE_CHECKING:
    from engram._principal import Principal, tenant_scope
    from engram.config import StoreURL, parse_url
    from engram.context import (
        ContextPolicy,
        WorkingMemory,
        WorkingMemoryMiddleware,
        WorkingMemoryState,
    )
    from engram.memory import (
        AsyncMemory,
        BranchReport,
        ContextItem,
        ErasureReport,
        Memory,
        Observation,
        RecallResult,
        RememberResult,
    )
    from engram.recall import Weights
    from engram.stores.cold import (
        ForgetReport,
        LongTermStore,
        MemoryRecord,
        Provenance,
        Recalled,
        WriteResult,
        aopen_store,
        open_store,
    )
    from engram.tokens import count_message_tokens, count_tokens

_LAZY = {
    "Principal": "engram._principal",
    "tenant_scope": "engram._principal",
    "StoreURL": "engram.config",
    "parse_url": "engram.config",
    "ContextPolicy": "engram.context",
    "WorkingMemory": "engram.context",
    "WorkingMemoryMiddleware": "engram.context",
    "WorkingMemoryState": "engram.context",
    "AsyncMemory": "engram.memory",
    "BranchReport": "engram.memory",
    "ContextItem": "engram.memory",
    "ErasureReport": "engram.memory",
    "Memory": "engram.memory",
    "Observation": "engram.memory",
    "RecallResult": "engram.memory",
    "RememberResult": "engram.memory",
    "Weights": "engram.recall",
    "ForgetReport": "engram.stores.cold",
    "LongTermStore": "engram.stores.cold",
    "MemoryRecord": "engram.stores.cold",
    "Provenance": "engram.stores.cold",
    "Recalled": "engram.stores.cold",
    "WriteResult": "engram.stores.cold",
    "aopen_store": "engram.stores.cold",
    "open_store": "engram.stores.cold",
    "count_message_tokens": "engram.tokens",
    "count_tokens": "engram.tokens",
}
"""Each lazily imported public name and the module it comes from."""

__all__ = [
    "AccessDeniedError",
    "AsyncMemory",
    "BackendError",
    "BranchReport",
    "ConfigError",
    "ConflictError",
    "ContextItem",
    "ContextPolicy",
    "EmbeddingError",
    "EmbeddingTimeoutError",
    "EncryptionError",
    "EngramError",
    "ErasureReport",
    "ForgetReport",
    "InvalidInputError",
    "LongTermStore",
    "Memory",
    "MemoryRecord",
    "MissingDependencyError",
    "NotFoundError",
    "Observation",
    "PathEscapeError",
    "PolicyRejectedError",
    "Principal",
    "Provenance",
    "RecallResult",
    "Recalled",
    "RememberResult",
    "SerializationError",
    "StaleWriteError",
    "StoreURL",
    "UnsafeDeserializationError",
    "Weights",
    "WorkingMemory",
    "WorkingMemoryMiddleware",
    "WorkingMemoryState",
    "WriteResult",
    "aopen_store",
    "count_message_tokens",
    "count_tokens",
    "open_store",
    "parse_url",
    "tenant_scope",
]


if not _typing.TYPE_CHECKING:  # a type checker reads the imports above (and flags typos)

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'engram' has no attribute {name!r}")
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
