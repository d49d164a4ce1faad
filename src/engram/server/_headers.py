"""Headers a request may carry once (ASGI middleware).

A request that sends its credential (``Authorization``) or the user it acts for
(``X-Engram-User``) more than once is refused with a 400 problem before anything reads
either: which of two values a proxy, a log or the server would take is anyone's guess,
and a first-one-wins server would act for the credential a proxy did not check.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from engram.server._deps import USER_HEADER
from engram.server._problems import problem

SINGLE = ("Authorization", USER_HEADER)
"""The headers a request may carry at most once."""


def repeated(headers: Iterable[tuple[bytes, bytes]], names: Iterable[str] = SINGLE) -> str | None:
    """The first of ``names`` that ``headers`` (an ASGI scope's) hold more than once."""
    seen = [bytes(name).lower() for name, _ in headers]
    return next((name for name in names if seen.count(name.lower().encode()) > 1), None)


class SingleHeaders:
    """Refuses a request that carries a header of :data:`SINGLE` twice with a 400 problem."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        twice = repeated(scope.get("headers", ())) if scope["type"] == "http" else None
        if twice is None:
            await self.app(scope, receive, send)
            return
        detail = f"the {twice} header is sent more than once; send it once"
        answer = problem(Request(scope), 400, "duplicate-header", detail)
        await answer(scope, receive, send)
