"""Authentication as one dependency: the credential in, the acting principal out.

No route reads identity from its path or body. A tenant-level credential names the
user it acts for in the ``X-Engram-User`` header; a user-bound one needs none (and is
refused for any other user). Scopes are checked before anything else runs.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, Header, Query, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram._principal import Principal
from engram.errors import AuthenticationError, InvalidInputError
from engram.memory import Memory
from engram.server.auth import Authenticator, Grant
from engram.server.keys import REFUSED
from engram.stores.audit import ErasureLog

T = TypeVar("T")
USER_HEADER = "X-Engram-User"
MAX_PAGE = 500

bearer = HTTPBearer(
    auto_error=False,
    description="An engram API key (`engram keys create`) or a JWT from the configured issuer.",
)


@dataclass(frozen=True, slots=True)
class ServerState:
    """What every request uses: the memory layer and the authenticator (and the erasure
    log, when the server keeps one)."""

    memory: Memory
    authenticator: Authenticator
    audit: ErasureLog | None = None


def state(request: Request) -> ServerState:
    found = request.app.state.engram
    assert isinstance(found, ServerState)
    return found


def grant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> Grant:
    """The grant of the request's bearer credential (401 without a valid one)."""
    if credentials is None:
        raise AuthenticationError(REFUSED)
    found = state(request).authenticator.authenticate(credentials.credentials)
    request.state.key_id = found.key_id
    return found


def acting(scope: str) -> Callable[..., Principal]:
    """A dependency: the principal of a grant holding ``scope``."""

    def principal(
        found: Annotated[Grant, Depends(grant)],
        user: Annotated[
            str | None,
            Header(
                alias=USER_HEADER,
                description="With a tenant-level key: the user of its tenant to act for.",
                max_length=128,
            ),
        ] = None,
    ) -> Principal:
        found.require(scope)
        return found.principal(user)

    principal.__name__ = f"acting_{scope}"
    return principal


Reader = Annotated[Principal, Depends(acting("read"))]
Writer = Annotated[Principal, Depends(acting("write"))]
Eraser = Annotated[Principal, Depends(acting("erase"))]
Layer = Annotated[ServerState, Depends(state)]


@dataclass(frozen=True, slots=True)
class PageQuery:
    limit: int
    offset: int


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset = data["o"] if isinstance(data, dict) else None
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError("cursor: not a cursor this server issued") from exc
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidInputError("cursor: not a cursor this server issued")
    return offset


def page_query(
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Items per page.")] = 50,
    cursor: Annotated[
        str | None, Query(max_length=200, description="`next_cursor` of the previous page.")
    ] = None,
) -> PageQuery:
    return PageQuery(limit, _offset(cursor))


Paging = Annotated[PageQuery, Depends(page_query)]


def paginate(items: Sequence[T], page: PageQuery) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next (``None`` after the last)."""
    end = page.offset + page.limit
    chosen = list(items[page.offset : end])
    if end >= len(items):
        return chosen, None
    token = base64.urlsafe_b64encode(json.dumps({"o": end}).encode()).decode().rstrip("=")
    return chosen, token
