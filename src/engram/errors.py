"""One exception tree: every error engram raises derives from :class:`EngramError`.

Driver errors (sqlite3, psycopg, redis, OS) are translated at the backend
boundary with ``raise ... from exc`` so callers catch engram's types only.
"""

from __future__ import annotations


class EngramError(Exception):
    """Root of every error engram raises."""


class ConfigError(EngramError):
    """A URL, path or option cannot be used (unknown scheme, missing part...)."""


class MissingDependencyError(ConfigError):
    """An optional extra is needed for this feature (the message names it)."""


class InvalidInputError(EngramError, ValueError):
    """An argument is malformed: empty id, bad filter operator, out-of-range value."""


class NotFoundError(EngramError, LookupError):
    """The thread, checkpoint, memory or document asked for does not exist."""


class ConflictError(EngramError):
    """The operation collides with existing state (e.g. a document already exists)."""


class StaleWriteError(ConflictError):
    """Another writer saved first: the write was based on what it has since replaced
    (read again and redo the change; engram's own read-modify-writes do)."""


class BackendError(EngramError):
    """The storage engine failed; the driver's exception is chained as ``__cause__``."""


class SerializationError(EngramError):
    """State could not be (de)serialised safely."""


class UnsafeDeserializationError(SerializationError):
    """A stored payload names a type that is not on the allow-list."""


class EncryptionError(SerializationError):
    """Encrypted state could not be decrypted (wrong or missing key, tampering)."""


class PolicyRejectedError(EngramError):
    """A write was refused by the write policy; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HeldForReviewError(PolicyRejectedError):
    """A write was held by the poisoning guard and queued for review instead of made."""


class AccessDeniedError(EngramError, PermissionError):
    """The principal may not touch this data (tenant isolation, path escape...)."""


class PathEscapeError(AccessDeniedError):
    """A document path resolves outside its root (``..``, absolute, symlink, NUL)."""


class EmbeddingError(EngramError):
    """An embedding service failed or answered something unusable; ``status`` is the HTTP code."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class EmbeddingTimeoutError(EmbeddingError, TimeoutError):
    """An embedding service did not answer in time."""


class AuthenticationError(AccessDeniedError):
    """A credential (API key or bearer token) was missing, malformed, unknown, revoked or
    expired; the message is the same for every case, so it reveals nothing."""
