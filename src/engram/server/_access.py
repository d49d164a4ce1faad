"""Request ids and structured access logs (ASGI middleware).

Each request gets an id: a well-formed ``X-Request-ID`` it came with, else a new one;
it is sent back in the response header. One JSON line per request goes to the
``engram.server.access`` logger: method, route template, status, duration, request
id and key id -- never a path parameter, query or body, so no memory content.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID = "x-request-id"
_WELL_FORMED = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
access_log = logging.getLogger("engram.server.access")


def request_id(scope: Scope) -> str:
    """The id a request brought (if well-formed) or a new one."""
    for name, value in scope.get("headers", ()):
        if name == REQUEST_ID.encode():
            text = bytes(value).decode("latin-1")
            if _WELL_FORMED.fullmatch(text):
                return text
    return uuid.uuid4().hex


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path is not None else "(unmatched)"


class AccessMiddleware:
    """Sets ``request.state.request_id``, echoes it, logs one JSON line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(scope)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = rid
        started = time.perf_counter()
        status = [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers = [h for h in message.get("headers", []) if h[0] != REQUEST_ID.encode()]
                message["headers"] = [*headers, (REQUEST_ID.encode(), rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            _log_line(scope, status[0], started, rid, state.get("key_id") or _mcp_key(scope))


def _mcp_key(scope: Scope) -> object:
    """The key id of a request the MCP endpoint authenticated (its SDK's auth middleware
    keeps the verified token as ``scope["user"]``), else None."""
    token = getattr(scope.get("user"), "access_token", None)
    return getattr(token, "client_id", None)


def _log_line(scope: Scope, status: int, started: float, rid: str, key_id: object) -> None:
    if not access_log.isEnabledFor(logging.INFO):
        return
    line = {
        "ts": time.time(),
        "method": scope.get("method"),
        "route": _route(scope),
        "status": status,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "request_id": rid,
        "key_id": key_id,
    }
    access_log.info(json.dumps(line, separators=(",", ":")))
