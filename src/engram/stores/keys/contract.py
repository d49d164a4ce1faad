"""What a key backend implements: :class:`KeyStore` over :class:`KeyRecord` rows.

A row holds a key's public part only: its id (the visible prefix of the token), who it
is bound to, its scopes, expiry and revocation, and a keyed hash of the whole token.
The token itself is never stored. Every method names the tenant, so a backend scopes
each statement to it (PostgreSQL: row-level security on ``tenant_id``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Self


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """One API key as stored: everything but the secret."""

    key_id: str
    tenant_id: str
    user_id: str | None
    scopes: frozenset[str]
    digest: str
    """Hex HMAC-SHA256 of the whole token under the server secret."""
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    label: str = ""


class KeyStore(ABC):
    """API keys of every tenant; each call acts inside one tenant."""

    @abstractmethod
    def add(self, record: KeyRecord) -> None:
        """Store a new key (its id is new: raise :class:`~engram.errors.ConflictError`
        if the tenant already has it)."""

    @abstractmethod
    def get(self, tenant_id: str, key_id: str) -> KeyRecord | None:
        """The key ``key_id`` of ``tenant_id``, revoked or not; ``None`` if it has none."""

    @abstractmethod
    def list(self, tenant_id: str) -> list[KeyRecord]:
        """Every key of ``tenant_id``, oldest first."""

    @abstractmethod
    def revoke(self, tenant_id: str, key_id: str, when: datetime) -> bool:
        """Mark the key revoked at ``when``; False if the tenant has no such live key."""

    @abstractmethod
    def erase_user(self, tenant_id: str, user_id: str) -> int:
        """Delete every key bound to ``user_id`` of ``tenant_id``, revoked or not (its row
        leaves no bytes behind: a forgotten user can neither sign in nor be read back from
        the key table); how many went. Tenant-wide keys are kept."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (idempotent)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
