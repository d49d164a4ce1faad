"""``engram mcp --http`` over PostgreSQL: the tiers under row-level security and the keys
in ``engram_api_keys``, reached by the MCP SDK's client. A key of another tenant (same
user id) reads nothing of Alice's; Alice reads and erases her own."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_support import bearer, call, http_server, story, text

from engram import Memory, Principal
from engram.recall import HashEmbedder
from engram.server.auth import open_keyring
from engram.server.keys import SECRET_ENV
from engram.stores.hot import thread_config

MARKER = "wallaby-8812"
ALICE = Principal("mcp-pg", "alice")
NAMESAKE = Principal("mcp-pg-other", "alice")
THREAD = "t-mcp-pg"
SECRET = "mcp-postgres-secret-0123456789abcdef"


def _seed(url: str) -> None:
    with Memory.open(url=url, embedder=HashEmbedder()) as memory:
        memory.forget(ALICE)
        memory.remember(ALICE, f"My codename is {MARKER}", slot="codename", tags=["profile"])
        memory.documents.write(ALICE, "users/alice/notes.md", f"# Notes\n\n{MARKER} notes\n")
        story(memory.checkpointer).invoke({"items": [MARKER]}, thread_config(THREAD, ALICE))


def _key(url: str, who: Principal) -> str:
    keyring = open_keyring(url=url)
    with keyring.store:
        scopes = ("read", "write", "erase")
        return keyring.create(who.tenant_id, user_id=who.user_id, scopes=scopes).token


async def test_mcp_over_postgres_keeps_tenants_apart(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    _seed(postgres_url)
    alice, namesake = _key(postgres_url, ALICE), _key(postgres_url, NAMESAKE)
    with http_server(None, url=postgres_url) as served:
        async with bearer(served, namesake) as client:
            reads = (("recall", {"query": f"codename {MARKER}"}), ("list_facts", {}),
                     ("thread_list", {}), ("memory_view", {"path": "/memories"}))  # fmt: skip
            for tool, args in reads:
                assert MARKER not in text(await call(client, tool, **args)), tool
            assert THREAD not in text(await call(client, "thread_list"))
        async with bearer(served, alice) as client:
            assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
            assert THREAD in text(await call(client, "thread_list"))
            forgot = await call(client, "forget", everything=True)
            assert not forgot.is_error, text(forgot)
            assert forgot.structured_content["participants"]["api_keys"] == {"keys": 1}
        async with bearer(served, _key(postgres_url, ALICE)) as client:  # hers went with her
            assert MARKER not in text(await call(client, "recall", query=f"codename {MARKER}"))
