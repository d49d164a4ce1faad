"""docs/mcp.md holds: its client configurations parse and start the server they name, its
HTTP command serves the endpoint its HTTP configuration points at, its Python runs."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_checks import TOOLS
from mcp_support import ALICE, bearer, child_env, free_port, http_server, make_key

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(encoding="utf-8"),
                      flags=re.M | re.S)


def _servers() -> list[dict[str, Any]]:
    return [json.loads(block)["mcpServers"]["engram"] for block in _blocks("json")]


def _engram() -> str:
    """The ``engram`` console script of this Python (or the one on PATH)."""
    beside = Path(sys.executable).with_name("engram")
    found = str(beside) if beside.exists() else shutil.which("engram")
    assert found, "the engram command is not installed"
    return found


def test_every_configuration_on_the_page_parses() -> None:
    stdio, http = _servers()
    assert stdio["command"] == "engram" and stdio["args"][0] == "mcp"
    assert http["url"].endswith("/mcp") and http["headers"]["Authorization"].startswith("Bearer ")


async def test_the_stdio_configuration_starts_the_server(tmp_path: Path) -> None:
    stdio = _servers()[0]
    env = {**stdio["env"], "ENGRAM_HOME": str(tmp_path / ".engram"), **child_env()}
    params = StdioServerParameters(command=_engram(), args=stdio["args"], env=env)
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        listing = await client.call_tool("memory_view", {"path": "/memories"})
    assert tools == TOOLS and not listing.is_error


def _http_command() -> list[str]:
    lines = [ln for block in _blocks("bash") for ln in block.splitlines()]
    command = shlex.split(next(ln for ln in lines if ln.startswith("engram mcp --http")))
    assert command[:3] == ["engram", "mcp", "--http"]
    return command[3:]


async def test_the_http_command_serves_the_configured_endpoint(tmp_path: Path) -> None:
    args, port = _http_command(), free_port()
    args[args.index("--port") + 1] = str(port)
    home = tmp_path / ".engram"
    token = make_key(home, ALICE, ("read",))
    http = _servers()[1]
    url = http["url"].replace(":8765/", f":{port}/")
    with http_server(home, *args, port=port) as served:
        assert served == url
        async with bearer(url, token) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
    assert tools == TOOLS


def test_the_python_on_the_page_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for block in _blocks("python"):
        exec(compile(block, str(PAGE), "exec"), namespace)
    assert namespace["block"].startswith("The <memory> blocks")
