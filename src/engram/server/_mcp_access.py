"""Who an MCP tool call acts for, and whether it may: one question, asked on every call.

A tool names the scope it needs (``read``, ``write`` or ``erase``) and gets back the
:class:`~engram.Principal` to act for, or an :class:`~engram.errors.AccessDeniedError`.
No tool argument names a tenant or a user: the principal comes from how the server was
started (stdio) or from the bearer credential of the request (HTTP).

A user-bound credential acts as its user only. A tenant-level credential names no user,
and no tool argument may name one, so over MCP it is refused, unless the server was
started for one user (``--user``): then it acts for that user of its own tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from pydantic import ConfigDict, Field

from engram._principal import Principal
from engram.errors import AccessDeniedError, AuthenticationError
from engram.server.auth import Authenticator, Grant
from engram.server.keys import REFUSED

ToolScope = Literal["read", "write", "erase"]
"""What a tool needs: ``read`` (recall, list, view), ``write`` (remember, create, edit,
fork) or ``erase`` (forget, delete)."""

EVERY_SCOPE: frozenset[str] = frozenset({"read", "write", "erase"})


class Access(Protocol):
    """Decides, for one call, the principal a tool acts for."""

    def principal(self, scope: ToolScope) -> Principal:
        """The principal to act for; :class:`AccessDeniedError` when the call may not."""
        ...

    def actor(self) -> str:
        """Who is asking, as the erasure audit log names them: the id of the API key or
        JWT subject of the call, or the local user a stdio server was started by."""
        ...


@dataclass(frozen=True, slots=True)
class FixedAccess:
    """A principal fixed when the server started (``engram mcp --tenant T --user U``):
    the local user who runs the process, with ``scopes`` (default: all of them)."""

    fixed: Principal
    scopes: frozenset[str] = EVERY_SCOPE
    started_by: str = "mcp"

    def principal(self, scope: ToolScope) -> Principal:
        if scope not in self.scopes:
            raise AccessDeniedError(f"this server was started without the {scope!r} scope")
        return self.fixed

    def actor(self) -> str:
        return self.started_by


TENANT_LEVEL = (
    "a tenant-level credential names no user; over MCP it acts only on a server started "
    "for one user (--user): use a key bound to a user"
)


def grant_principal(grant: Grant, scope: ToolScope, user: str | None) -> Principal:
    """The principal ``grant`` acts for with ``scope``, on a server fixed to ``user``."""
    grant.require(scope)
    if grant.user_id is None and user is None:
        raise AccessDeniedError(TENANT_LEVEL)
    return grant.principal(user)


class GrantToken(AccessToken):
    """The SDK's access token, carrying the :class:`Grant` it was verified into."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    grant: Grant = Field(exclude=True)


class GrantVerifier:
    """The SDK's ``TokenVerifier`` over an engram :class:`Authenticator`: API keys and
    JWTs, the same credentials as the REST API."""

    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            grant = await anyio.to_thread.run_sync(self.authenticator.authenticate, token)
        except AuthenticationError:
            return None
        return GrantToken(
            token=token,
            client_id=grant.key_id,
            scopes=sorted(grant.scopes),
            expires_at=None if grant.expires_at is None else int(grant.expires_at.timestamp()),
            subject=f"{grant.tenant_id}/{grant.user_id or '*'}",
            grant=grant,
        )


@dataclass(frozen=True, slots=True)
class BearerAccess:
    """Over HTTP: the grant of the request's bearer credential (see :class:`GrantVerifier`),
    on a server started for ``user`` (or for none)."""

    user: str | None = None

    def principal(self, scope: ToolScope) -> Principal:
        return grant_principal(self._grant(), scope, self.user)

    def actor(self) -> str:
        return self._grant().key_id

    @staticmethod
    def _grant() -> Grant:
        token = get_access_token()
        if not isinstance(token, GrantToken):
            raise AuthenticationError(REFUSED)
        return token.grant


@dataclass(frozen=True, slots=True)
class KeyAccess:
    """Over stdio with ``--key``: the key is verified again on every call, so a revoked
    or expired key stops working at once."""

    authenticator: Authenticator
    token: str
    user: str | None = None

    def principal(self, scope: ToolScope) -> Principal:
        return grant_principal(self.authenticator.authenticate(self.token), scope, self.user)

    def actor(self) -> str:
        return self.authenticator.authenticate(self.token).key_id
