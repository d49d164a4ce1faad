"""docs/redis.md's code runs as written: its Python against the test server (the page
names a local default URL), its shell session on a redis-server of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.redis

PAGE = Path(__file__).parents[2] / "docs" / "redis.md"
PAGE_URL = "redis://127.0.0.1:6379/0"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_python_blocks_run_against_a_real_server(
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hot_graphs import story_graph

    from engram.stores.hot import open_checkpointer, thread_config

    blocks = _blocks("python")
    assert blocks and all(PAGE_URL in b for b in blocks[:1])
    from engram import Principal

    with open_checkpointer(redis_url) as saver:  # something for the listing to show
        story_graph(saver).invoke({"items": ["x"]}, thread_config("t1", Principal("acme", "alice")))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block.replace(PAGE_URL, redis_url), str(PAGE), "exec"), namespace)
    out = capsys.readouterr().out
    assert "ThreadInfo(thread_id='t1', tenant_id='acme', user_id='alice'" in out
    assert out.rstrip().endswith("RedisSaver")


def test_the_shell_session_runs_as_written(redis_service: object, tmp_path: Path) -> None:
    (block,) = _blocks("bash")
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "home")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "awaiting_approval" in done.stdout or "awaiting approval" in done.stdout
    assert re.search(r"^t1\t", done.stdout, flags=re.M), done.stdout
