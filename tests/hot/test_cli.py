"""``engram threads ...`` drives the same API from the command line."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hot_graphs import story_graph

from engram import Principal
from engram.cli import main
from engram.errors import BackendError
from engram.stores.hot import Threads, open_checkpointer, thread_config

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "redis":
        url = str(request.getfixturevalue("redis_url"))
    else:
        url = f"sqlite:///{tmp_path / 'hot.db'}"
    with open_checkpointer(url) as saver:
        graph = story_graph(saver)
        for turn in range(2):
            graph.invoke({"items": [f"turn {turn}"]}, thread_config("a1", ALICE))
        graph.invoke({"items": ["b"]}, thread_config("b1", BOB))
    return url


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, ["threads", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _ids(url: str, thread_id: str) -> list[str]:
    with open_checkpointer(url) as saver:
        return [h.checkpoint_id for h in Threads(saver).history(thread_id)]


def test_list_threads_per_user(url: str) -> None:
    out = _cli("list-threads", "--url", url, "--tenant", "acme", "--user", "alice")
    assert out.startswith("a1\tacme/alice\t10 checkpoints") and "b1" not in out
    assert {line.split("\t")[0] for line in _cli("list-threads", "--url", url).splitlines()} == {
        "a1",
        "b1",
    }


def test_history_diff_fork_prune_sizes(url: str) -> None:
    ids = _ids(url, "a1")
    history = _cli("history", "a1", "--url", url, "--limit", "3").splitlines()
    assert [line.split("\t")[0] for line in history] == ids[:3]
    assert "~ items: appended" in _cli("diff", "a1", ids[4], ids[0], "--url", url)
    shown = _cli("get", "a1", ids[3], "--url", url).splitlines()
    assert shown[0].startswith(f"{ids[3]}\tstep 5\tloop")
    assert "  items: ['turn 0', 'a', 'b', 'c', 'turn 1']" in shown
    assert any(line.startswith("  pending write: task ") for line in shown)
    assert "-> a1-copy" in _cli("fork", "a1", ids[2], "--to", "a1-copy", "--url", url)
    assert "kept 2 checkpoints, deleted 8 checkpoints" in _cli(
        "prune", "a1", "--keep", "2", "--url", url
    )
    sizes = _cli("sizes", "a1", "a1-copy", "--url", url).splitlines()
    assert [line.split("\t")[:2] for line in sizes] == [
        ["a1", "2 checkpoints"],
        ["a1-copy", "1 checkpoints"],
    ]


def test_errors_are_one_line_messages(url: str) -> None:
    result = CliRunner().invoke(
        main, ["threads", "history", "b1", "--url", url, "--tenant", "acme", "--user", "alice"]
    )
    assert result.exit_code == 1 and "NotFoundError: no thread 'b1'" in result.output
    result = CliRunner().invoke(main, ["threads", "prune", "a1", "--keep", "0", "--url", url])
    assert result.exit_code == 1 and "InvalidInputError" in result.output


def test_runs_as_a_real_process(url: str) -> None:
    command = [sys.executable, "-c", "from engram.cli import main; main()"]
    done = subprocess.run(
        [*command, "threads", "sizes", "--url", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines()[0].startswith("a1\t10 checkpoints")


def _one_line(result: Result, kind: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: {kind}: ") and result.output.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["threads", "list-threads"],
        ["agent", "status", "t1", "--tenant", "acme", "--user", "alice"],
        ["remember", "a fact", "--tenant", "acme", "--user", "alice", "--embedder", "hash"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_hot_tier_file_that_is_no_database_is_a_one_line_error(
    tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / "checkpoints.db").write_text("garbage\n" * 100)
    result = CliRunner().invoke(main, [*args, "--home", str(tmp_path)])
    _one_line(result, "BackendError")
    assert "checkpoints.db" in result.output or "database" in result.output


def test_a_hot_tier_in_place_of_a_folder_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "checkpoints.db").mkdir()
    (tmp_path / "checkpoints.db" / "x").write_text("")
    url = f"sqlite:///{tmp_path / 'checkpoints.db'}"
    with pytest.raises(BackendError), open_checkpointer(url):
        pass


def _as_unprivileged(command: list[str]) -> list[str]:
    """``command`` run without the root's right to write read-only files (as the user it
    is run by, when that is not root)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("capsh") is None:
        pytest.skip("root without capsh cannot give up its right to write read-only files")
    drop = "--drop=cap_dac_override,cap_dac_read_search,cap_fowner"
    return ["capsh", drop, "--", "-c", shlex.join(command)]


@pytest.mark.parametrize(
    "args",
    [["threads", "list-threads"], ["agent", "status", "t1", "--tenant", "acme", "--user", "alice"]],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_read_only_home_is_a_one_line_error(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "ro"
    with open_checkpointer(f"sqlite:///{home / 'checkpoints.db'}") as saver:
        story_graph(saver).invoke({"items": ["x"]}, thread_config("t1", ALICE))
    for path in home.iterdir():
        path.chmod(0o444)
    home.chmod(0o555)
    try:
        command = [sys.executable, "-m", "engram", *args, "--home", str(home)]
        done = subprocess.run(
            _as_unprivileged(command), capture_output=True, text=True, timeout=120
        )
    finally:
        home.chmod(0o755)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("Error: BackendError: ") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("who", [("other", ""), ("", "bob"), ("", "")], ids=repr)
@pytest.mark.parametrize("command", ["history", "get", "sizes", "list-threads"])
def test_an_empty_tenant_or_user_is_refused_not_dropped(
    url: str, who: tuple[str, str], command: str
) -> None:
    target = [] if command == "list-threads" else ["a1"]
    scope = ["--tenant", who[0], "--user", who[1]]
    result = CliRunner().invoke(main, ["threads", command, *target, "--url", url, *scope])
    _one_line(result, "InvalidInputError")
    assert "a1" not in result.output.replace("'a1'", "")
