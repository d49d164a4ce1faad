"""engram: the memory layer of an AI agent.

Public names only; implementation modules are private.
"""

from engram._principal import Principal, tenant_scope
from engram.config import StoreURL, parse_url
from engram.context import (
    ContextPolicy,
    WorkingMemory,
    WorkingMemoryMiddleware,
    WorkingMemoryState,
)
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
