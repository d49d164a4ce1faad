"""The command line with its standard streams closed or full, a full disk, and ids too long
to echo: one line saying why and a nonzero exit, never a traceback, never a silent success,
and never a live API key whose token nobody saw."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram import Principal
from engram.agent import MarketAnalyst
from engram.cli import main

WHO = ["--tenant", "acme", "--user", "alice"]
HASH = ["--embedder", "hash"]
FULL = Path("/dev/full")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ENGRAM_HOME", "ENGRAM_TENANT", "ENGRAM_USER", "ENGRAM_KEY_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        main, ["remember", "Likes rolling hills", *WHO, *HASH, "--home", str(home)]
    )
    assert result.exit_code == 0, result.output
    return home


def _closing(*fds: int) -> Callable[[], None]:
    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


def _engram(home: Path, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "engram", *args, "--home", str(home)]
    options.setdefault("stdin", subprocess.DEVNULL)
    options.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(command, stderr=subprocess.PIPE, text=True, timeout=120, **options)


def _one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    assert all(word in done.stderr for word in words), done.stderr


def _recalled(home: Path) -> str:
    result = CliRunner().invoke(main, ["memory", "list", *WHO, "--home", str(home)])
    return result.output


@pytest.mark.parametrize(
    "args",
    [
        ["forget", *WHO, *HASH],
        ["docs", "write", "users/alice/a.md", *WHO],
        ["import", "-", *WHO, *HASH],
        ["mcp", *WHO, *HASH],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_closed_standard_input_is_a_one_line_error(home: Path, args: list[str]) -> None:
    done = _engram(home, *args, preexec_fn=_closing(0))
    _one_line_error(done, "standard input is closed")
    assert "rolling hills" in _recalled(home)


@pytest.mark.parametrize(
    "args",
    [["export", *WHO, *HASH], ["forget", "--yes", *WHO, *HASH], ["recall", "hills", *WHO, *HASH]],
    ids=lambda a: a[0],
)
def test_a_full_standard_output_is_a_one_line_error(home: Path, args: list[str]) -> None:
    with FULL.open("w") as full:
        done = _engram(home, *args, stdout=full)
    _one_line_error(done, "No space left on device")


def test_a_closed_standard_output_is_an_error_before_anything_runs(home: Path) -> None:
    for args in (["export", *WHO, *HASH], ["forget", "--yes", *WHO, *HASH]):
        done = _engram(home, *args, stdout=None, preexec_fn=_closing(1))
        _one_line_error(done, "standard output is closed")
    assert "rolling hills" in _recalled(home)


def test_a_key_whose_token_cannot_be_printed_is_revoked(home: Path) -> None:
    with FULL.open("w") as full:
        done = _engram(home, "keys", "create", *WHO, stdout=full)
    _one_line_error(done, "revoked")
    listed = CliRunner().invoke(main, ["keys", "list", "--tenant", "acme", "--home", str(home)])
    keys = json.loads(listed.output)
    assert len(keys) == 1 and keys[0]["revoked_at"] is not None


def _full_disk() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))


def test_keys_create_on_a_full_disk_is_a_one_line_error_and_leaves_no_temp_file(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    done = _engram(home, "keys", "create", *WHO, preexec_fn=_full_disk)
    _one_line_error(done, "BackendError", "keys.secret")
    assert sorted(p.name for p in home.iterdir()) == []


def test_eval_out_an_existing_file_is_a_one_line_error(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    result = CliRunner().invoke(main, ["eval", "lifecycle", *HASH, "--out", str(taken)])
    assert result.exit_code == 2 and not isinstance(result.exception, FileExistsError)
    assert "is a file" in result.output and taken.read_text() == "mine\n"


@pytest.mark.parametrize(
    "args",
    [
        ["threads", "history", "{id}"],
        ["threads", "history", "{id}", *WHO],
        ["memory", "history", "{id}", *WHO],
        ["review", "approve", "{id}", *WHO, *HASH],
    ],
    ids=lambda a: " ".join(a[:2]) + (" scoped" if "--tenant" in a and a[0] == "threads" else ""),
)
def test_an_id_that_finds_nothing_is_echoed_cut_short(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    MarketAnalyst(home=home).run(Principal("acme", "alice"), "Compare NVDA", thread_id="t1")
    long_id = "abcd" * 25_000
    given = [long_id if a == "{id}" else a for a in args]
    result = CliRunner().invoke(main, [*given, "--home", str(home)])
    assert result.exit_code == 1 and result.output.startswith("Error: NotFoundError: ")
    assert result.output.count("\n") == 1 and len(result.output) < 200, result.output[:300]
