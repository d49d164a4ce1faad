"""Authentication: a credential in, a :class:`Grant` out, a :class:`Principal` from it.

An :class:`Authenticator` turns a bearer credential (an API key, or a JWT when
configured) into a :class:`Grant`: the tenant, the user (or none, for a tenant-level
credential), the scopes and the key id. Nothing in a request can widen it: a user-bound
grant acts only as its user; a tenant-level grant acts for a user of its own tenant by
naming it; no grant ever names another tenant. Every failure raises
:class:`~engram.errors.AuthenticationError` with one message that reveals nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from engram._principal import Principal
from engram.config import DEFAULT_HOME
from engram.errors import AccessDeniedError, AuthenticationError, InvalidInputError
from engram.server._jwt import JWTSettings, JWTVerifier
from engram.server.keys import REFUSED, SCOPES, TOKEN_PREFIX, Keyring, server_secret
from engram.stores.keys import KeyRecord, open_keys

__all__ = [
    "SCOPES",
    "AuthenticationError",
    "Authenticator",
    "CredentialAuthenticator",
    "Grant",
    "JWTSettings",
    "open_authenticator",
]

FORBIDDEN = "this credential does not allow that"
"""The one message of every refused action (missing scope, another user)."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What a verified credential allows."""

    tenant_id: str
    user_id: str | None
    """``None``: a tenant-level credential, which names the user it acts for."""
    scopes: frozenset[str]
    """Some of ``read``, ``write``, ``erase``, ``admin`` (``admin`` implies the others)."""
    key_id: str
    """The key's visible id (``egk_...``), or the JWT subject."""
    expires_at: datetime | None

    def principal(self, user: str | None = None) -> Principal:
        """Who a request acts for: a user-bound grant's own user (``user`` is ``None`` or
        equal to it); for a tenant-level grant, ``user`` of its tenant (required)."""
        if self.user_id is not None:
            if user is not None and user != self.user_id:
                raise AccessDeniedError(FORBIDDEN)
            return Principal(self.tenant_id, self.user_id)
        if user is None:
            raise AccessDeniedError("a tenant-level credential must name the user it acts for")
        return Principal(self.tenant_id, user)

    def allows(self, scope: str) -> bool:
        """Whether the grant holds ``scope`` (or ``admin``)."""
        if scope not in SCOPES:
            raise InvalidInputError(f"unknown scope {scope!r}; scopes are {sorted(SCOPES)}")
        return scope in self.scopes or "admin" in self.scopes

    def require(self, scope: str) -> None:
        """Raise :class:`AccessDeniedError` unless the grant holds ``scope``."""
        if not self.allows(scope):
            raise AccessDeniedError(FORBIDDEN)


def grant_of(record: KeyRecord) -> Grant:
    """The grant of a stored API key."""
    return Grant(record.tenant_id, record.user_id, record.scopes, record.key_id, record.expires_at)


class Authenticator(Protocol):
    """Turns a bearer credential into a :class:`Grant`."""

    def authenticate(self, token: str) -> Grant:
        """The grant of ``token``; :class:`AuthenticationError` if it is not valid."""
        ...


class CredentialAuthenticator:
    """API keys (``egk_...``) from a :class:`Keyring` and, when configured, JWTs."""

    def __init__(self, keyring: Keyring | None, verifier: JWTVerifier | None = None) -> None:
        self.keyring = keyring
        self.verifier = verifier

    def authenticate(self, token: str) -> Grant:
        if not isinstance(token, str) or not token:
            raise AuthenticationError(REFUSED)
        if token.startswith(TOKEN_PREFIX) and self.keyring is not None:
            return grant_of(self.keyring.verify(token))
        if self.verifier is not None and not token.startswith(TOKEN_PREFIX):
            claims = self.verifier.claims(token)
            return Grant(
                claims.tenant_id, claims.user_id, claims.scopes, claims.subject, claims.expires_at
            )
        raise AuthenticationError(REFUSED)

    def close(self) -> None:
        """Release the key store's connections."""
        if self.keyring is not None:
            self.keyring.store.close()

    def __enter__(self) -> CredentialAuthenticator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_keyring(*, home: str | Path | None = None, url: str | None = None) -> Keyring:
    """The API keys of an embedded ``home`` (default ``./.engram``) or a PostgreSQL ``url``
    (an admin's: the table and application role are set up first)."""
    if url is not None:
        return Keyring(open_keys(url=url), server_secret(None))
    where = Path(home) if home is not None else DEFAULT_HOME
    return Keyring(open_keys(where), server_secret(where))


def open_authenticator(
    *, home: str | None = None, url: str | None = None, jwt: JWTSettings | None = None
) -> CredentialAuthenticator:
    """API keys of ``home`` or ``url`` and, with ``jwt``, bearer JWTs; with ``jwt`` alone
    (no home, no url), JWTs only."""
    verifier = JWTVerifier(jwt) if jwt is not None else None
    if jwt is not None and home is None and url is None:
        return CredentialAuthenticator(None, verifier)
    return CredentialAuthenticator(open_keyring(home=home, url=url), verifier)
