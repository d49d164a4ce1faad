"""``engram mcp`` over stdio, driven by the MCP SDK's client: a real server process.

Starting the server is the slow part, so one session runs every check of
``mcp_checks`` in turn (each on its own paths and facts); the erasure of everything has
a session of its own.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_checks import CHECKS, check_forget_everything, check_nothing_left
from mcp_support import ALICE, MARKER, call, engram_mcp, erasures, make_key, revoke_key, text

from engram import Principal


def _as_alice(home: Path) -> Client:
    return Client(engram_mcp(home, "--tenant", ALICE.tenant_id, "--user", ALICE.user_id))


async def test_every_check_over_stdio(home: Path) -> None:
    async with _as_alice(home) as client:
        for check in CHECKS:
            await check(client)


async def test_forget_everything_over_stdio(home: Path) -> None:
    assert erasures(home, ALICE) == []
    async with _as_alice(home) as client:
        report = await check_forget_everything(client)
        await check_nothing_left(client)
    (record,) = erasures(home, ALICE)  # the erasure is on record: who, and how much
    assert record.actor == f"mcp:{getpass.getuser()}"
    assert record.counts["facts"] == report["facts"]["keys"] >= 2
    assert erasures(home, Principal(ALICE.tenant_id, "bob")) == []


async def test_forgetting_facts_by_key_is_not_an_erasure_of_the_user(home: Path) -> None:
    async with _as_alice(home) as client:
        kept = await call(client, "remember", observation="Collects vintage fountain pens")
        key = kept.structured_content["key"] if kept.structured_content else None
        report = (await call(client, "forget", keys=[key])).structured_content
    assert report is not None and report["facts"]["keys"] == 1
    assert erasures(home, ALICE) == []


def _run_once(params: StdioServerParameters) -> subprocess.CompletedProcess[str]:
    """Start the server with nothing on its standard input; how it ended."""
    env = {**os.environ, **(params.env or {})}
    command = [params.command, *params.args]
    return subprocess.run(
        command, env=env, input="", capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("args", [(), ("--tenant", "acme"), ("--user", "alice")])
def test_stdio_refuses_to_start_without_a_whole_principal(
    home: Path, args: tuple[str, ...]
) -> None:
    params = engram_mcp(home, *args)
    done = _run_once(params)
    assert done.returncode == 1
    assert "acts for --tenant and --user" in done.stderr and done.stdout == ""


async def test_stdio_with_a_key_acts_for_its_user_with_its_scopes(home: Path) -> None:
    token = make_key(home, ALICE, ("read",))
    params = engram_mcp(home)
    params.env = {**(params.env or {}), "ENGRAM_API_KEY": token}
    async with Client(params) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        refused = await call(client, "remember", observation="Likes green tea in the morning")
        assert refused.is_error and "does not allow" in text(refused)
        revoke_key(home, token)
        after = await call(client, "recall", query=f"codename {MARKER}")
        assert after.is_error and MARKER not in text(after)
        assert "invalid credentials" in text(after)


def test_stdio_refuses_to_start_with_an_invalid_key(home: Path) -> None:
    params = engram_mcp(home, "--key", "egk_nothing.YWNtZQ.secret")
    done = _run_once(params)
    assert done.returncode == 1 and "AuthenticationError" in done.stderr
