"""``engram mcp`` over stdio, driven by the MCP SDK's client: a real server process.

Starting the server is the slow part, so one session runs every check of
``mcp_checks`` in turn (each on its own paths and facts); the erasure of everything has
a session of its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp_checks import CHECKS, check_forget_everything
from mcp_support import ALICE, engram_mcp


def _as_alice(home: Path) -> Client:
    return Client(engram_mcp(home, "--tenant", ALICE.tenant_id, "--user", ALICE.user_id))


async def test_every_check_over_stdio(home: Path) -> None:
    async with _as_alice(home) as client:
        for check in CHECKS:
            await check(client)


async def test_forget_everything_over_stdio(home: Path) -> None:
    async with _as_alice(home) as client:
        await check_forget_everything(client)


@pytest.mark.parametrize("args", [(), ("--tenant", "acme"), ("--user", "alice")])
def test_stdio_refuses_to_start_without_a_whole_principal(
    home: Path, args: tuple[str, ...]
) -> None:
    params = engram_mcp(home, *args)
    done = subprocess.run([params.command, *params.args], env={**os.environ, **(params.env or {})},
                          input="", capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "acts for --tenant and --user" in done.stderr and done.stdout == ""
