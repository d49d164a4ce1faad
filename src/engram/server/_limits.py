"""How much of a request the server reads (ASGI middleware).

A body larger than :data:`MAX_BODY_BYTES` is refused with 413 before the route reads it: at
once when its ``Content-Length`` says so, and as soon as the bytes received pass the limit
when it streams without one. The largest request a client means to send (a batch of facts,
a document) stays well under it; a request that does not is refused before it costs the
server its size in memory, authenticated or not.
"""

from __future__ import annotations

from fastapi import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram.server._problems import problem

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The most bytes of a request body the server reads (16 MiB)."""


def _too_large(limit: int) -> str:
    return f"the request body is larger than the {limit} bytes the server reads"


class BodyLimit:
    """Refuses a request body larger than ``limit`` bytes with a 413 problem."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            answer = problem(Request(scope), 413, "too-large", _too_large(self.limit))
            await answer(scope, receive, send)
            return
        seen = 0

        async def counting() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, _too_large(self.limit))
            return message

        await self.app(scope, counting, send)
