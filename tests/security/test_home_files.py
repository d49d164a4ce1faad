"""The embedded home on disk: found under any folder name (``#``, ``?``, ``%20``, a space,
non-ASCII letters), and private to its owner whatever the umask."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli import main

WHO = ["--tenant", "acme", "--user", "alice"]
HASH = ["--embedder", "hash"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ENGRAM_HOME", "ENGRAM_TENANT", "ENGRAM_USER", "ENGRAM_KEY_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _run(*args: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(main, list(args), input=stdin)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize(
    "name",
    ["x#y", "h?mode=ro", "h%20pct", "home with space", "hömé☃", "a#b?c=d%2Fe f"],
)
def test_forget_erases_the_api_keys_of_a_home_under_any_folder_name(
    tmp_path: Path, name: str
) -> None:
    parent = tmp_path / "homes"
    home = str(parent / name)
    _run("remember", "a fact about the blue sea", *WHO, *HASH, "--home", home)
    token = _run("keys", "create", *WHO, "--home", home).strip()
    _run("forget", "--yes", *WHO, *HASH, "--home", home)
    listed = json.loads(_run("keys", "list", "--tenant", "acme", "--home", home))
    assert listed == [], f"{token.split('.')[0]} outlived the erasure"
    assert [p.name for p in parent.iterdir()] == [name]  # nothing created beside the home
    assert sorted(p.name for p in tmp_path.iterdir()) == ["homes"]


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield int(request.param)
    finally:
        os.umask(old)


def _fill(home: Path) -> None:
    where = ["--home", str(home)]
    _run("remember", "Alice's codename is Bluefin", *WHO, *HASH, *where)
    _run("recall", "codename", *WHO, *HASH, *where)
    _run("docs", "write", "users/alice/plan.md", *WHO, *where, stdin="Bluefin\n")
    _run("keys", "create", *WHO, *where)
    _run("agent", "run", "Compare NVDA and AMD", "--thread", "t1", *WHO, *HASH, *where)
    _run("forget", "--yes", "--key", "nope", *WHO, *HASH, *where)


def _modes(home: Path) -> dict[str, int]:
    return {str(p.relative_to(home)): stat.S_IMODE(p.lstat().st_mode) for p in home.rglob("*")}


@pytest.mark.parametrize("umask", [0o022, 0o000], indirect=True, ids=["022", "000"])
def test_a_fresh_home_is_private_to_its_owner_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    home = tmp_path / "new" / "home"
    _fill(home)
    modes = _modes(home)
    assert {"memory.db", "checkpoints.db", "keys.secret", "documents"} <= set(modes)
    assert any(name.startswith("memory.db-vec-") for name in modes)
    assert "documents/acme/users/alice/plan.md" in modes
    shared = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert shared == {}
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) & 0o077 == 0


@pytest.mark.parametrize("umask", [0o000], indirect=True, ids=["000"])
def test_a_home_folder_engram_did_not_create_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    _fill(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o755
    shared = {name: oct(mode) for name, mode in _modes(home).items() if mode & 0o077}
    assert shared == {}
