"""``engram mcp --http``: a real server process on a free loopback port, reached by the
MCP SDK's client with bearer API keys, as an OAuth 2.1 resource server.

The server lives for the module; each test opens its own client sessions. Alice's
memory (``mcp_support.seed``) carries a marker; adversaries hold valid keys of other
principals and try every tool and resource on her thread, document and fact, beside the
same calls on missing ones: a leak is an answer holding the marker, an oracle an answer
that differs from the one about a missing object. Both must be 0.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, MCPError
from mcp_checks import CHECKS, check_forget_everything, check_nothing_left
from mcp_support import (
    ALICE,
    MARKER,
    METADATA,
    THREAD,
    bearer,
    call,
    erasures,
    http_server,
    make_key,
    revoke_key,
    seed,
    text,
)

from engram import Principal
from engram.server.keys import split_token
from engram.server.mcp import TENANT_LEVEL

EVERY = ("read", "write", "erase")
ADVERSARIES = (
    Principal("acme", "bob"),
    Principal("other", "alice"),
    Principal("acme", "alice2"),
    Principal("acme", "Alice"),
    Principal("acme2", "alice"),
)
NOTES = "users/alice/notes.md"
LISTINGS = (3, 5, 6, 10)
"""The reads of ``_reads`` that list: Alice's paths and thread must not appear there."""


@dataclass(frozen=True)
class World:
    home: Path
    url: str
    alice: str

    def key(self, principal: Principal | str, scopes: tuple[str, ...] = EVERY) -> str:
        return make_key(self.home, principal, scopes)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("mcp-http") / ".engram"
    seed(home)
    alice = make_key(home, ALICE, EVERY)
    with http_server(home) as url:
        yield World(home, url, alice)


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
async def test_every_check_over_http(
    world: World, check: Callable[[Client], Coroutine[Any, Any, None]]
) -> None:
    async with bearer(world.url, world.alice) as client:
        await check(client)


def test_protected_resource_metadata_is_published(world: World) -> None:
    base = world.url.removesuffix("/mcp")
    metadata = httpx.get(base + METADATA, timeout=30).json()
    assert metadata["resource"] == world.url
    assert metadata["authorization_servers"] == [base + "/"] or metadata[
        "authorization_servers"
    ] == [base]
    refused = httpx.post(world.url, json={}, timeout=30)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and f'resource_metadata="{base}{METADATA}"' in challenge


def _initialize(url: str, token: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx.post(url, json=body, headers=headers, timeout=30)


async def test_invalid_and_revoked_keys_are_refused(world: World) -> None:
    doomed = world.key(ALICE)
    assert _initialize(world.url, doomed).status_code == 200
    async with bearer(world.url, doomed) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
    revoke_key(world.home, doomed)
    tampered = world.alice[:-1] + ("A" if world.alice[-1] != "A" else "B")
    for token in (doomed, tampered, "egk_nothing.YWNtZQ.secret", "not-a-key", "x" * 5000):
        response = _initialize(world.url, token)
        assert response.status_code == 401, token
        assert MARKER not in response.text and "invalid_token" in response.text
        with pytest.raises(BaseExceptionGroup) as refused:
            async with bearer(world.url, token) as client:
                await call(client, "recall", query=MARKER)
        assert [type(e) for e in _leaves(refused.value)] == [MCPError]


def test_a_credential_sent_twice_is_refused(world: World) -> None:
    """Two ``Authorization`` headers (another user's key first, or second): neither is
    used, the request is refused as malformed."""
    bob = world.key(Principal("acme", "bob"))
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}}  # fmt: skip
    accept = ("Accept", "application/json, text/event-stream")
    for first, second in ((bob, world.alice), (world.alice, bob), (world.alice, world.alice)):
        headers = [("Authorization", f"Bearer {first}"), ("Authorization", f"Bearer {second}")]
        answer = httpx.post(world.url, json=body, headers=[*headers, accept], timeout=30)
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["title"] == "Bad Request"
    assert _initialize(world.url, world.alice).status_code == 200


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors inside nested exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_each_tool_needs_its_scope(world: World) -> None:
    reader, writer = world.key(ALICE, ("read",)), world.key(ALICE, ("read", "write"))
    async with bearer(world.url, reader) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        assert MARKER in text(await call(client, "memory_view", path=f"/memories/{NOTES}"))
        for tool, args in [
            ("remember", {"observation": "Likes tea with lemon"}),
            ("memory_create", {"path": "/memories/r.md", "file_text": "hello there"}),
            ("thread_fork", {"thread_id": THREAD, "checkpoint_id": "x"}),
            ("forget", {"everything": True}),
            ("memory_delete", {"path": f"/memories/{NOTES}"}),
        ]:
            refused = await client.call_tool(tool, args)
            assert refused.is_error and "does not allow" in text(refused), tool
    async with bearer(world.url, writer) as client:
        wrote = await call(client, "remember", observation="Likes tea with lemon", slot="tea")
        assert wrote.structured_content is not None and wrote.structured_content["stored"]
        for tool, args in [
            ("forget", {"keys": [wrote.structured_content["key"]]}),
            ("memory_delete", {"path": f"/memories/{NOTES}"}),
        ]:
            refused = await client.call_tool(tool, args)
            assert refused.is_error and "does not allow" in text(refused), tool
    async with bearer(world.url, world.alice) as client:
        assert MARKER in text(await call(client, "memory_view", path=f"/memories/{NOTES}"))
        assert "tea with lemon" in text(await call(client, "recall", query="tea lemon"))
        assert "r.md" not in text(await call(client, "memory_view"))
        await call(client, "forget", keys=[wrote.structured_content["key"]])


async def test_a_tenant_level_key_is_refused_for_every_tool(world: World) -> None:
    tenant_key = world.key("acme")
    async with bearer(world.url, tenant_key) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        for tool in tools:
            args = {"query": MARKER} if tool == "recall" else {}
            answer = await client.call_tool(tool, args)
            assert answer.is_error and MARKER not in text(answer), tool
        checked = await client.call_tool("recall", {"query": MARKER})
        assert TENANT_LEVEL in " ".join(text(checked).split())
        with pytest.raises(MCPError) as refused:
            await client.read_resource("engram://profile")
        assert MARKER not in str(refused.value)


async def test_a_tenant_level_key_acts_for_the_user_the_server_serves(world: World) -> None:
    tenant_key, bob = world.key("acme"), world.key(Principal("acme", "bob"))
    with http_server(world.home, "--user", "alice") as url:
        async with bearer(url, tenant_key) as client:
            assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        async with bearer(url, bob) as client:
            answer = await call(client, "recall", query=f"codename {MARKER}")
            assert answer.is_error and MARKER not in text(answer)


async def _tool(client: Client, name: str, **args: Any) -> str:
    answer = await client.call_tool(name, args)
    return f"{answer.is_error}:{text(answer)}"


async def _resource(client: Client, uri: str) -> str:
    try:
        answer = await client.read_resource(uri)
    except MCPError as exc:
        return f"error:{exc}"
    return "ok:" + "".join(getattr(c, "text", "") for c in answer.contents)


async def _reads(client: Client, thread: str, path: str, key: str, checkpoint: str) -> list[str]:
    """Every read an adversary might try, on Alice's objects or on missing ones."""
    return [
        await _tool(client, "recall", query=f"codename {MARKER} notes", budget_tokens=4000),
        await _tool(client, "list_facts", include_history=True),
        await _tool(client, "fact_history", key=key),
        await _tool(client, "memory_view"),
        await _tool(client, "memory_view", path=f"/memories/{path}"),
        await _tool(client, "memory_view", path="/memories/users"),
        await _tool(client, "thread_list"),
        await _tool(client, "thread_history", thread_id=thread),
        await _tool(client, "thread_diff", thread_id=thread, from_checkpoint=checkpoint),
        await _resource(client, "engram://profile"),
        await _resource(client, "engram://documents"),
        await _resource(client, f"engram://documents/{path}"),
    ]


async def _alices_ids(world: World) -> tuple[str, str]:
    async with bearer(world.url, world.alice) as client:
        listed = text(await call(client, "list_facts"))
        history = (await call(client, "thread_history", thread_id=THREAD)).structured_content
    key = re.search(r'key="([^"]+)"[^>]*>\nMy codename', listed)
    assert key is not None and history is not None
    return key.group(1), history["checkpoints"][-1]["checkpoint_id"]


def _masked(answer: str, *names: str) -> str:
    for number, name in enumerate(names):
        answer = answer.replace(name, f"<{number}>")
    return answer


async def test_no_key_of_another_principal_reads_or_detects_alices_memory(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    key, checkpoint = await _alices_ids(world)
    missing = ("t-nobody", "users/nobody/notes.md", "0" * len(key), "1f0" + "0" * 33)
    tried = leaks = oracles = 0
    failures: list[str] = []
    for who in ADVERSARIES:
        async with bearer(world.url, world.key(who)) as client:
            real = await _reads(client, THREAD, NOTES, key, checkpoint)
            none = await _reads(client, *missing)
        for number, (seen, absent) in enumerate(zip(real, none, strict=True)):
            tried += 1
            listing = number in LISTINGS and "notes" in seen
            if MARKER in seen or listing:  # a path is the caller's own words, but not listed
                leaks += 1
                failures.append(f"leak {who} #{number}: {seen[:160]}")
            if _masked(seen, THREAD, NOTES, key, checkpoint) != _masked(absent, *missing):
                oracles += 1
                failures.append(f"oracle {who} #{number}: {seen[:100]} | {absent[:100]}")
    with capsys.disabled():
        print(
            f"\nMCP isolation: {tried} reads by {len(ADVERSARIES)} adversaries: "
            f"{leaks} leaks, {oracles} oracles"
        )
    assert failures == [], "\n".join(failures)


async def test_no_key_of_another_principal_changes_alices_memory(world: World) -> None:
    key, checkpoint = await _alices_ids(world)
    for who in ADVERSARIES:
        async with bearer(world.url, world.key(who)) as client:
            for tool, args in [
                ("memory_delete", {"path": "/memories/users/alice"}),
                (
                    "memory_str_replace",
                    {"path": f"/memories/{NOTES}", "old_str": MARKER, "new_str": "gone"},
                ),
                (
                    "memory_rename",
                    {"old_path": f"/memories/{NOTES}", "new_path": "/memories/mine.md"},
                ),
                ("forget", {"keys": [key]}),
                (
                    "thread_fork",
                    {
                        "thread_id": THREAD,
                        "checkpoint_id": checkpoint,
                        "new_thread_id": f"stolen-{who.user_id}",
                    },
                ),
            ]:
                answer = await client.call_tool(tool, args)
                assert MARKER not in text(answer), (who, tool)
                if tool != "forget":  # forgetting a key one does not hold erases nothing
                    assert answer.is_error, (who, tool, text(answer))
            await client.call_tool("forget", {"everything": True})
    async with bearer(world.url, world.alice) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        assert MARKER in text(await call(client, "memory_view", path=f"/memories/{NOTES}"))
        listed = (await call(client, "thread_list")).structured_content
        assert listed is not None and THREAD in {t["thread_id"] for t in listed["threads"]}
        assert not [t for t in listed["threads"] if t["thread_id"].startswith("stolen-")]


def test_a_session_answers_only_the_credential_that_opened_it(world: World) -> None:
    opened = _initialize(world.url, world.alice)
    session = opened.headers["mcp-session-id"]
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": f"codename {MARKER}"}},
    }

    def post(token: str, message: dict[str, Any]) -> httpx.Response:
        headers = {
            "Authorization": f"Bearer {token}",
            "mcp-session-id": session,
            "Accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
        }
        return httpx.post(world.url, json=message, headers=headers, timeout=30)

    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(world.alice, ready).status_code == 202
    for token in (world.key(Principal("acme", "bob")), world.key(Principal("other", "alice"))):
        hijack = post(token, body)
        assert hijack.status_code in (403, 404), hijack.status_code
        assert MARKER not in hijack.text
    own = post(world.alice, body)
    assert own.status_code == 200 and MARKER in own.text  # the same request, its own key


async def test_concurrent_sessions_and_calls_all_land(world: World) -> None:
    async def session(number: int) -> list[str]:
        async with bearer(world.url, world.alice) as client:
            calls = [
                call(
                    client,
                    "remember",
                    observation=f"Visited harbour number {number}x{i}",
                    slot=f"harbour-{number}-{i}",
                )
                for i in range(4)
            ]
            done = await asyncio.gather(*calls)
        return [str(r.structured_content["key"]) for r in done if r.structured_content]

    keys = [key for found in await asyncio.gather(*(session(n) for n in range(4))) for key in found]
    assert len(set(keys)) == 16
    async with bearer(world.url, world.alice) as client:
        listed = text(await call(client, "list_facts"))
        assert all(f'key="{key}"' in listed for key in keys)
        report = (await call(client, "forget", keys=keys)).structured_content
    assert report is not None and report["facts"]["keys"] == 16


async def test_forget_everything_over_http(world: World) -> None:
    """Last: it erases Alice."""
    async with bearer(world.url, world.alice) as client:
        report = await check_forget_everything(client)
    assert report["participants"]["api_keys"]["keys"] >= 1  # every key bound to Alice
    (record,) = erasures(world.home, ALICE)  # on record, naming the key that asked
    assert record.actor == split_token(world.alice)[0]
    assert record.counts["facts"] == report["facts"]["keys"]
    assert _initialize(world.url, world.alice).status_code == 401  # her key went with her
    async with bearer(world.url, world.key(ALICE)) as client:  # a key made afterwards
        await check_nothing_left(client)
