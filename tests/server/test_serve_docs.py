"""docs/serve.md as a reader uses it: its blocks run, and the blocks marked not run (the
long-running server, the curl call against it) run here, exactly as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest
from serve_support import _wait_ready

from engram.server.keys import SECRET_ENV

PAGE = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
BLOCK = re.compile(r"(?:^(<!-- not run: [^>]*-->)\n)?^```(\w+)\n(.*?)^```", re.M | re.S)


def _blocks() -> list[tuple[bool, str, str]]:
    """(runs, language, code) of every fenced block of the page."""
    text = PAGE.read_text(encoding="utf-8")
    return [(not marker, lang, code) for marker, lang, code in BLOCK.findall(text)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    shim = tmp_path / "bin"  # `engram` is this interpreter's engram, installed or not
    shim.mkdir()
    (shim / "engram").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m engram "$@"\n')
    (shim / "engram").chmod(0o755)
    path = f"{shim}{os.pathsep}{environ.get('PATH', '')}"
    home = tmp_path / ".engram"
    return {**environ, "PATH": path, "ENGRAM_HOME": str(home), "PORT": str(_free_port())}


def _bash(code: str, env: dict[str, str], cwd: Path) -> str:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{code}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_runnable_blocks_run(env: dict[str, str], tmp_path: Path) -> None:
    runnable = [(lang, code) for runs, lang, code in _blocks() if runs]
    assert [lang for lang, _ in runnable if lang in ("bash", "python")] == [
        "bash",
        "bash",
        "python",
    ]
    for lang, code in runnable:
        if lang == "bash":
            _bash(code, env, tmp_path)
        elif lang == "python":
            exec(compile(code, str(PAGE), "exec"), {})
    listed = json.loads(_bash("engram keys list --tenant acme", env, tmp_path))
    assert {k["label"] for k in listed} >= {"support dashboard"}
    assert [k["user"] for k in listed if k["revoked_at"]] == ["bob"]


def test_the_server_and_curl_blocks_run_as_written(env: dict[str, str], tmp_path: Path) -> None:
    skipped = [code for runs, lang, code in _blocks() if not runs and lang == "bash"]
    serve, curl, jwt = skipped
    _bash(_blocks()[0][2], env, tmp_path)  # the home and a key, as a reader made them
    token = _bash("engram keys create --tenant acme --user alice", env, tmp_path).strip()
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", f"exec {serve}"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    from serve_support import Server

    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == f"engram serving on http://127.0.0.1:{env['PORT']}"
        _wait_ready(Server(process, line.split()[-1]))
        answer = json.loads(_bash(curl, {**env, "TOKEN": token}, tmp_path))
        assert "window seats" in answer["text"] and answer["budget_tokens"] == 500
    finally:
        process.terminate()
        process.wait(timeout=30)
    _check_jwt_flags(jwt)


def _check_jwt_flags(command: str) -> None:
    from engram.cli import main

    args = shlex.split(command.replace("\\\n", " "))
    assert args[:2] == ["engram", "serve"]
    serve = main.get_command(click.Context(main), "serve")
    assert serve is not None
    params = serve.make_context("serve", args[2:]).params
    assert params["jwt_audience"] == "https://engram.example.com"
    assert params["jwt_tenant_claim"] == "org_id"
