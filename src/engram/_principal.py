"""The authenticated identity every tier scopes its data by."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from engram.errors import InvalidInputError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$")


def validate_id(kind: str, value: str) -> str:
    """Return ``value`` if it is a safe identifier, else raise :class:`InvalidInputError`.

    Identifiers become namespace segments, SQL parameters and directory names,
    so they are restricted to a conservative character set (no ``/``, no dots
    at the start, no whitespace, at most 128 characters); a user may not be named
    ``README`` in any case (the shared README of the review and profile folders).
    """
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidInputError(
            f"{kind} must be 1-128 characters of letters, digits and _.@:- "
            f"starting with a letter or digit; got {value!r}"
        )
    if kind == "user_id" and value.lower() == "readme":
        raise InvalidInputError(
            f"user_id {value!r} is reserved: review/README.md and user-profiles/README.md are "
            "the tenant's (choose another id)"
        )
    return value


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for, built by the server after authentication.

    Thread ids locate checkpoints but authorise nothing: every read and write
    is scoped by the principal's ``tenant_id`` and ``user_id``.
    """

    tenant_id: str
    user_id: str

    def __post_init__(self) -> None:
        validate_id("tenant_id", self.tenant_id)
        validate_id("user_id", self.user_id)

    @property
    def namespace(self) -> tuple[str, str]:
        """The namespace prefix that holds this user's long-term memory."""
        return (self.tenant_id, self.user_id)


_TENANT: ContextVar[str | None] = ContextVar("engram_tenant", default=None)


@contextmanager
def tenant_scope(tenant: str | None) -> Iterator[None]:
    """Act for ``tenant`` inside the block (``None``: for no tenant).

    Backends that enforce the tenant in the database (PostgreSQL row-level security)
    scope a statement that names no namespace (a version fetched by id, a thread's
    checkpoint read by thread id) to this tenant; with none, such a statement sees
    nothing. A context variable: each thread and asyncio task has its own.
    """
    if tenant is not None and (not isinstance(tenant, str) or not tenant):
        raise InvalidInputError(f"a tenant is a non-empty string, got {tenant!r}")
    token = _TENANT.set(tenant)
    try:
        yield
    finally:
        _TENANT.reset(token)


def scoped_tenant() -> str | None:
    """The tenant of the innermost :func:`tenant_scope`, else ``None``."""
    return _TENANT.get()
