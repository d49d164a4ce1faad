"""API keys: minted once, stored as a keyed hash, verified in constant time.

A token reads ``egk_<id>.<tenant>.<secret>``: ``egk_<id>`` is the key's visible id (what
``engram keys list`` shows and access logs record), ``<tenant>`` the tenant it is bound to
(base64url, so the lookup is scoped to that tenant, under row-level security on
PostgreSQL) and ``<secret>`` 256 random bits. Only HMAC-SHA256 of the whole token under
the server secret is stored, so a copy of the database verifies no token without the
secret. The secret is ``$ENGRAM_KEY_SECRET``, else ``<home>/keys.secret`` (created once,
mode 0600, for the embedded home).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engram._files import FILE_MODE, private_folder
from engram._principal import validate_id
from engram.errors import (
    AuthenticationError,
    BackendError,
    ConfigError,
    InvalidInputError,
    NotFoundError,
)
from engram.stores.keys import KeyRecord, KeyStore

SCOPES: frozenset[str] = frozenset({"read", "write", "erase", "admin"})
"""What a key may allow; ``admin`` implies the other three."""
DEFAULT_SCOPES: frozenset[str] = frozenset({"read", "write"})
TOKEN_PREFIX = "egk_"
SECRET_ENV = "ENGRAM_KEY_SECRET"
SECRET_FILE = "keys.secret"
REFUSED = "invalid credentials"
"""The one message of every failed authentication."""

_ID_CHARS = 12
_DUMMY = hashlib.sha256(b"engram: no such key").hexdigest()


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just created: ``token`` is shown this once and never stored."""

    record: KeyRecord
    token: str


def server_secret(home: Path | None) -> bytes:
    """The HMAC secret: ``$ENGRAM_KEY_SECRET``, else ``<home>/keys.secret``."""
    value = os.environ.get(SECRET_ENV)
    if value:
        if len(value) < 16:
            raise ConfigError(f"{SECRET_ENV} must be at least 16 characters")
        return value.encode("utf-8")
    if home is None:
        raise ConfigError(f"API keys on PostgreSQL need {SECRET_ENV} (a long random string)")
    return _home_secret(Path(home) / SECRET_FILE)


def _home_secret(path: Path) -> bytes:
    """Read the secret file, creating it atomically (readable by its owner only) if absent."""
    try:
        if not path.exists():
            _create_secret(path)
        data = path.read_bytes()
    except OSError as exc:
        raise BackendError(f"cannot keep the key secret {path}: {exc.strerror or exc}") from exc
    if len(data) < 16:
        raise ConfigError(f"{path} holds no usable key secret")
    return data


def _create_secret(path: Path) -> None:
    """Write a new secret beside ``path`` and link it there, unless another process made
    one first (theirs is kept); the temporary file goes whatever happens."""
    private_folder(path.parent)
    fresh = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(secrets.token_bytes(32))
            out.flush()
            os.fsync(out.fileno())
        with suppress(FileExistsError):
            os.link(fresh, path)
    finally:
        fresh.unlink(missing_ok=True)


def check_scopes(scopes: Iterable[str]) -> frozenset[str]:
    """``scopes`` as a set, each one of :data:`SCOPES`."""
    found = frozenset(scopes)
    unknown = sorted(found - SCOPES)
    if unknown or not found:
        raise InvalidInputError(f"scopes are some of {sorted(SCOPES)}, got {sorted(found)}")
    return found


def _encode_tenant(tenant_id: str) -> str:
    return base64.urlsafe_b64encode(tenant_id.encode("utf-8")).decode("ascii").rstrip("=")


def _decode_tenant(part: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        return validate_id("tenant_id", raw.decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, InvalidInputError, ValueError) as exc:
        raise AuthenticationError(REFUSED) from exc


def split_token(token: str) -> tuple[str, str]:
    """The key id and tenant a token names (:class:`AuthenticationError` if malformed)."""
    parts = token.split(".") if isinstance(token, str) else []
    key_id = parts[0] if parts else ""
    valid = len(parts) == 3 and key_id.startswith(TOKEN_PREFIX) and len(key_id) <= 64
    if not valid or not all(part.isascii() and part for part in parts):
        raise AuthenticationError(REFUSED)
    return key_id, _decode_tenant(parts[1])


def live(record: KeyRecord, now: datetime) -> bool:
    """Whether ``record`` is neither revoked nor expired at ``now``."""
    expired = record.expires_at is not None and record.expires_at <= now
    return record.revoked_at is None and not expired


class Keyring:
    """Create, list, revoke and verify the API keys of a :class:`KeyStore`."""

    def __init__(
        self,
        store: KeyStore,
        secret: bytes,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self._secret = secret
        self._clock = clock

    def _digest(self, token: str) -> str:
        return hmac.new(self._secret, token.encode("utf-8"), hashlib.sha256).hexdigest()

    def create(
        self,
        tenant_id: str,
        *,
        user_id: str | None = None,
        scopes: Iterable[str] = DEFAULT_SCOPES,
        expires_at: datetime | None = None,
        label: str = "",
    ) -> NewKey:
        """A new key bound to ``tenant_id`` (and ``user_id`` when given)."""
        validate_id("tenant_id", tenant_id)
        if user_id is not None:
            validate_id("user_id", user_id)
        now = self._clock()
        if expires_at is not None and (expires_at.tzinfo is None or expires_at <= now):
            raise InvalidInputError("a key's expiry is a time zone-aware time in the future")
        key_id = TOKEN_PREFIX + secrets.token_hex(_ID_CHARS // 2)
        token = f"{key_id}.{_encode_tenant(tenant_id)}.{secrets.token_urlsafe(32)}"
        record = KeyRecord(
            key_id,
            tenant_id,
            user_id,
            check_scopes(scopes),
            self._digest(token),
            now,
            expires_at,
            None,
            label,
        )
        self.store.add(record)
        return NewKey(record, token)

    def list(self, tenant_id: str) -> list[KeyRecord]:
        """Every key of ``tenant_id`` (revoked and expired ones too), oldest first."""
        return self.store.list(validate_id("tenant_id", tenant_id))

    def revoke(self, tenant_id: str, key_id: str, *, user_id: str | None = None) -> None:
        """Revoke a live key now (:class:`NotFoundError` if the tenant has none by that id,
        or, with ``user_id``, none bound to that user)."""
        validate_id("tenant_id", tenant_id)
        if user_id is not None:
            record = self.store.get(tenant_id, key_id)
            if record is None or record.user_id != user_id:
                raise NotFoundError(f"user {user_id!r} has no key {key_id!r}")
        if not self.store.revoke(tenant_id, key_id, self._clock()):
            raise NotFoundError(f"tenant {tenant_id!r} has no live key {key_id!r}")

    def verify(self, token: str) -> KeyRecord:
        """The live key ``token`` belongs to, else :class:`AuthenticationError` (one
        message for every reason; the digest comparison is constant-time)."""
        key_id, tenant_id = split_token(token)
        record = self.store.get(tenant_id, key_id)
        stored = record.digest if record is not None else _DUMMY
        matches = hmac.compare_digest(stored, self._digest(token))
        if record is None or not matches or not live(record, self._clock()):
            raise AuthenticationError(REFUSED)
        return record
