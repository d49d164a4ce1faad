"""MCP tool arguments are checked as strictly as the REST API's: no lax coercion of a flag
(``forget {"everything": "on"}`` erased the whole user), and every argument refused past
the same bound as its REST counterpart (``memory_create`` stored 860 KB where
``POST /v1/documents/create`` refuses 100,001 characters).

In-process: the SDK's client against :func:`~engram.server.mcp.mcp_server`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_support import ALICE, MARKER, text

from engram import Memory
from engram.recall import HashEmbedder
from engram.server.app import create_app
from engram.server.mcp import FixedAccess, mcp_server

TEXT = 100_000
"""REST's longest text (``POST /v1/memories``' observation, a document's content)."""


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder()) as opened:
        yield opened


def _client(memory: Memory) -> Client:
    """The SDK's client of a server acting for Alice (open it with ``async with``)."""
    return Client(mcp_server(memory, FixedAccess(ALICE)))


async def _schemas(client: Client) -> dict[str, dict[str, Any]]:
    """Each tool's input schema, by tool name."""
    return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


def _flags(schemas: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Every (tool, argument) whose value is a boolean (or a boolean or null)."""
    found = []
    for tool, schema in schemas.items():
        for name, prop in schema.get("properties", {}).items():
            kinds = [prop, *prop.get("anyOf", [])]
            if any(kind.get("type") == "boolean" for kind in kinds):
                found.append((tool, name))
    return sorted(found)


NOT_BOOLEANS = ["on", "yes", "true", "True", "1", 1, 0, "false", "off", 1.0, [True], {}]


async def test_every_flag_takes_a_json_boolean_and_nothing_else(memory: Memory) -> None:
    async with _client(memory) as client:
        await _every_flag_takes_a_json_boolean_and_nothing_else(client)


async def _every_flag_takes_a_json_boolean_and_nothing_else(client: Client) -> None:
    flags = _flags(await _schemas(client))
    assert ("forget", "everything") in flags and len(flags) >= 3
    for tool, name in flags:
        for value in NOT_BOOLEANS:
            args: dict[str, Any] = {name: value}
            if tool == "recall":
                args["query"] = MARKER
            answer = await client.call_tool(tool, args)
            assert answer.is_error, (tool, name, value, text(answer)[:200])
            assert MARKER not in text(answer)
        if tool != "forget":  # (everything=false without keys is refused: it says nothing)
            ok: dict[str, Any] = {name: False} | ({"query": MARKER} if tool == "recall" else {})
            assert not (await client.call_tool(tool, ok)).is_error, (tool, name)


async def test_forget_everything_as_a_string_erases_nothing(memory: Memory) -> None:
    async with _client(memory) as client:
        await _forget_everything_as_a_string_erases_nothing(client)


async def _forget_everything_as_a_string_erases_nothing(client: Client) -> None:
    for value in ("on", "yes", "true", 1):
        answer = await client.call_tool("forget", {"everything": value})
        assert answer.is_error
    assert MARKER in text(await client.call_tool("list_facts", {}))
    notes = await client.call_tool("memory_view", {"path": "/memories/users/alice/notes.md"})
    assert MARKER in text(notes)


# -- the same bounds as the REST API -------------------------------------------------------

Where = tuple[str, ...]
"""Where a REST counterpart's schema is: ("body", model, field) or ("param", method,
path, name)."""

COUNTERPARTS: dict[tuple[str, str], Where] = {
    ("remember", "observation"): ("body", "RememberIn", "observation"),
    ("remember", "slot"): ("body", "RememberIn", "slot"),
    ("remember", "tags"): ("body", "RememberIn", "tags"),
    ("remember", "thread_id"): ("body", "RememberIn", "thread_id"),
    ("recall", "query"): ("body", "RecallIn", "query"),
    ("recall", "budget_tokens"): ("body", "RecallIn", "budget_tokens"),
    ("recall", "k"): ("body", "RecallIn", "k"),
    ("recall", "min_score"): ("body", "RecallIn", "min_score"),
    ("forget", "keys"): ("body", "ForgetIn", "keys"),
    ("fact_history", "key"): ("param", "get", "/v1/facts/{key}/history", "key"),
    ("memory_view", "path"): ("body", "ViewIn", "path"),
    ("memory_view", "view_range"): ("body", "ViewIn", "view_range"),
    ("memory_create", "path"): ("body", "CreateIn", "path"),
    ("memory_create", "file_text"): ("body", "CreateIn", "file_text"),
    ("memory_str_replace", "path"): ("body", "StrReplaceIn", "path"),
    ("memory_str_replace", "old_str"): ("body", "StrReplaceIn", "old_str"),
    ("memory_str_replace", "new_str"): ("body", "StrReplaceIn", "new_str"),
    ("memory_insert", "path"): ("body", "InsertIn", "path"),
    ("memory_insert", "insert_line"): ("body", "InsertIn", "insert_line"),
    ("memory_insert", "insert_text"): ("body", "InsertIn", "insert_text"),
    ("memory_delete", "path"): ("body", "DeleteIn", "path"),
    ("memory_rename", "old_path"): ("body", "RenameIn", "old_path"),
    ("memory_rename", "new_path"): ("body", "RenameIn", "new_path"),
    ("thread_history", "thread_id"): ("param", "get", "/v1/threads/{thread_id}/history",
                                      "thread_id"),
    ("thread_diff", "thread_id"): ("param", "get", "/v1/threads/{thread_id}/diff", "thread_id"),
    ("thread_diff", "from_checkpoint"): ("param", "get", "/v1/threads/{thread_id}/diff", "from"),
    ("thread_diff", "to_checkpoint"): ("param", "get", "/v1/threads/{thread_id}/diff", "to"),
    ("thread_fork", "thread_id"): ("param", "post", "/v1/threads/{thread_id}/fork", "thread_id"),
    ("thread_fork", "checkpoint_id"): ("body", "ForkIn", "checkpoint_id"),
    ("thread_fork", "new_thread_id"): ("body", "ForkIn", "new_thread_id"),
}  # fmt: skip
UNBOUNDED = {("recall", "as_of"), ("thread_history", "limit")}
"""Arguments with no length: a time, and a count of items answered (at least 1)."""
BOUNDS = ("maxLength", "minLength", "maxItems", "maximum", "minimum")


def _rest_openapi() -> dict[str, Any]:
    return create_app(object(), object()).openapi()  # type: ignore[arg-type]


def _rest_schema(document: dict[str, Any], where: Where) -> dict[str, Any]:
    if where[0] == "body":
        schema: dict[str, Any] = document["components"]["schemas"][where[1]]["properties"]
        return schema[where[2]]
    _, method, path, name = where
    parameters = document["paths"][path][method]["parameters"]
    found: dict[str, Any] = next(p for p in parameters if p["name"] == name)["schema"]
    return found


def _bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """The bounds of a value (of its non-null branch) and of its items."""
    branch = next((b for b in schema.get("anyOf", []) if b.get("type") != "null"), schema)
    found = {k: branch[k] for k in BOUNDS if k in branch}
    items = branch.get("items", {})
    found.update({f"items.{k}": items[k] for k in BOUNDS if k in items})
    return found


async def test_every_argument_has_its_rest_counterparts_bounds(memory: Memory) -> None:
    async with _client(memory) as client:
        await _every_argument_has_its_rest_counterparts_bounds(client)


async def _every_argument_has_its_rest_counterparts_bounds(client: Client) -> None:
    document = _rest_openapi()
    schemas = await _schemas(client)
    flags = set(_flags(schemas))
    arguments = {(t, n) for t, s in schemas.items() for n in s.get("properties", {})}
    assert arguments - flags - UNBOUNDED == set(COUNTERPARTS)
    for (tool, name), where in COUNTERPARTS.items():
        mcp = _bounds(schemas[tool]["properties"][name])
        rest = _bounds(_rest_schema(document, where))
        if (tool, name) == ("forget", "keys"):
            mcp.pop("minItems", None)  # MCP: keys, or everything=true; never an empty list
        assert mcp == rest, (tool, name, mcp, rest)
        kind = rest.get("items.maxLength", rest.get("maxLength", rest.get("maximum")))
        assert kind is not None or "maxItems" in rest, (tool, name)  # bounded at all


async def test_a_document_or_query_longer_than_rest_takes_is_refused(memory: Memory) -> None:
    async with _client(memory) as client:
        await _a_document_or_query_longer_than_rest_takes_is_refused(client)


async def _a_document_or_query_longer_than_rest_takes_is_refused(client: Client) -> None:
    big = "Dan notes line about markets and tickers.\n" * (TEXT // 40)
    assert len(big) > TEXT
    refused = [
        ("memory_create", {"path": "/memories/big.md", "file_text": big}),
        ("memory_create", {"path": "/memories/" + "d" * 1100 + ".md", "file_text": "x"}),
        ("recall", {"query": "x" * (2 * 1024 * 1024)}),
        ("remember", {"observation": big}),
        ("remember", {"observation": "Dan likes tea", "tags": ["t" * 257]}),
        ("remember", {"observation": "Dan likes tea", "tags": ["t"] * 33}),
        ("remember", {"observation": "Dan likes tea", "thread_id": "t" * 257}),
        ("forget", {"keys": ["k" * 257]}),
        ("forget", {"keys": ["k"] * 1001}),
        ("fact_history", {"key": "k" * 257}),
        ("thread_fork", {"thread_id": "t" * 257, "checkpoint_id": "c"}),
        ("memory_insert", {"path": "/memories/a.md", "insert_line": 10_000_001,
                           "insert_text": "x"}),
    ]  # fmt: skip
    for tool, args in refused:
        answer = await client.call_tool(tool, args)
        assert answer.is_error, (tool, {k: str(v)[:40] for k, v in args.items()})
    listing = text(await client.call_tool("memory_view", {"path": "/memories"}))
    assert "big.md" not in listing
    assert "Dan" not in text(await client.call_tool("list_facts", {}))
    fits = "Dan notes line about markets and tickers.\n" * (TEXT // 50)
    made = await client.call_tool("memory_create", {"path": "/memories/fits.md", "file_text": fits})
    assert not made.is_error, text(made)[:200]
