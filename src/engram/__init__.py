"""engram: the memory layer of an AI agent.

Public names only; implementation modules are private.
"""

from engram._principal import Principal
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
    EncryptionError,
    EngramError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    PathEscapeError,
    PolicyRejectedError,
    SerializationError,
    UnsafeDeserializationError,
)
from engram.tokens import count_message_tokens, count_tokens

__all__ = [
    "AccessDeniedError",
    "BackendError",
    "ConfigError",
    "ConflictError",
    "ContextPolicy",
    "EncryptionError",
    "EngramError",
    "InvalidInputError",
    "MissingDependencyError",
    "NotFoundError",
    "PathEscapeError",
    "PolicyRejectedError",
    "Principal",
    "SerializationError",
    "StoreURL",
    "UnsafeDeserializationError",
    "WorkingMemory",
    "WorkingMemoryMiddleware",
    "WorkingMemoryState",
    "count_message_tokens",
    "count_tokens",
    "parse_url",
]
