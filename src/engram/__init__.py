"""engram: the memory layer of an AI agent.

Public names only; implementation modules are private.
"""

from engram._principal import Principal
from engram.config import StoreURL, parse_url
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

__all__ = [
    "AccessDeniedError",
    "BackendError",
    "ConfigError",
    "ConflictError",
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
    "parse_url",
]
