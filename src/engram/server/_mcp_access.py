"""Who an MCP tool call acts for, and whether it may: one question, asked on every call.

A tool names the scope it needs (``read``, ``write`` or ``erase``) and gets back the
:class:`~engram.Principal` to act for, or an :class:`~engram.errors.AccessDeniedError`.
No tool argument names a tenant or a user: the principal comes from how the server was
started (stdio) or from the bearer credential of the request (HTTP).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from engram._principal import Principal
from engram.errors import AccessDeniedError

ToolScope = Literal["read", "write", "erase"]
"""What a tool needs: ``read`` (recall, list, view), ``write`` (remember, create, edit,
fork) or ``erase`` (forget, delete)."""

EVERY_SCOPE: frozenset[str] = frozenset({"read", "write", "erase"})


class Access(Protocol):
    """Decides, for one call, the principal a tool acts for."""

    def principal(self, scope: ToolScope) -> Principal:
        """The principal to act for; :class:`AccessDeniedError` when the call may not."""
        ...


@dataclass(frozen=True, slots=True)
class FixedAccess:
    """A principal fixed when the server started (``engram mcp --tenant T --user U``):
    the local user who runs the process, with ``scopes`` (default: all of them)."""

    fixed: Principal
    scopes: frozenset[str] = EVERY_SCOPE

    def principal(self, scope: ToolScope) -> Principal:
        if scope not in self.scopes:
            raise AccessDeniedError(f"this server was started without the {scope!r} scope")
        return self.fixed
