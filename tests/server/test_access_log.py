"""The access log names the key of a request the MCP endpoint authenticated."""

from __future__ import annotations

import asyncio
import json
import logging
from types import SimpleNamespace

import pytest
from starlette.types import Message, Receive, Scope, Send

from engram.server._access import AccessMiddleware


async def _mcp_like(scope: Scope, receive: Receive, send: Send) -> None:
    """What the MCP SDK's bearer middleware leaves: the verified token as ``scope["user"]``."""
    scope["user"] = SimpleNamespace(access_token=SimpleNamespace(client_id="egk_0123abcd"))
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def test_an_mcp_request_is_logged_with_its_key(caplog: pytest.LogCaptureFixture) -> None:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    with caplog.at_level(logging.INFO, logger="engram.server.access"):
        asyncio.run(AccessMiddleware(_mcp_like)(scope, receive, send))
    (line,) = [json.loads(r.getMessage()) for r in caplog.records]
    assert (line["status"], line["key_id"]) == (200, "egk_0123abcd")
