"""``engram memory ...``: the CLI is a thin skin over the store (SQLite file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli import main


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, ["memory", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_remember_recall_history_forget(tmp_path: Path) -> None:
    who = ["--tenant", "acme", "--user", "alice", "--url", f"sqlite:///{tmp_path}/m.db"]
    emb = ["--embedder", "hash"]
    first = _run("remember", "Lives in Oslo", "--slot", "city", "--tag", "profile", *who, *emb)
    assert first.startswith("added\t")
    key = first.split("\t")[1]
    args = ["memory", "remember", "Lives in Bergen", "--tag", "misc", *who, *emb]
    rejected = CliRunner().invoke(main, args)
    assert rejected.exit_code == 1
    assert rejected.output.startswith("Error: not remembered (rejected): no stable tag among")
    assert rejected.output.count("\n") == 1
    second = _run("remember", "Lives in Bergen", "--slot", "city", "--tag", "profile", *who, *emb)
    assert second.startswith(f"updated\t{key}\t")
    lines = _run("recall", "where she lives", "--json", *who, *emb).splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["Lives in Bergen"]
    history = _run("history", key, *who, *emb).splitlines()
    assert [h.split("\t")[-1] for h in history] == ["Lives in Oslo", "Lives in Bergen"]
    assert "keys=1 versions=2" in _run("forget-facts", "--yes", *who, *emb)
    assert _run("recall", "live", *who, *emb) == ""


def test_re_embed_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    who = ["--tenant", "acme", "--user", "bob", "--url", url]
    _run("remember", "Plays the cello", "--tag", "skill", *who, "--embedder", "hash")
    assert "re-embedded 1 versions" in _run("re-embed", "--url", url, "--embedder", "minilm")
    assert "re-embedded 0 versions" in _run("re-embed", "--url", url, "--embedder", "minilm")
    found = _run("recall", "cello", *who, "--embedder", "minilm")
    assert found.endswith("Plays the cello\n")


def test_bad_principal_is_a_clean_error(tmp_path: Path) -> None:
    url = ["--url", f"sqlite:///{tmp_path}/m.db", "--embedder", "hash"]
    _run("remember", "Plays the cello", "--tenant", "acme", "--user", "bob", *url)
    args = ["memory", "recall", "x", "--tenant", "../x", "--user", "u"]
    result = CliRunner().invoke(main, [*args, *url])
    assert result.exit_code == 1 and "InvalidInputError" in result.output


def test_reading_a_local_qdrant_folder_that_is_not_there_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    who = ["--tenant", "acme", "--user", "bob", "--embedder", "hash"]
    for scheme in ("qdrant+local", "qdrant+edge"):
        url = ["--url", f"{scheme}:///missing-{scheme}"]
        result = CliRunner().invoke(main, ["memory", "recall", "cello", *who, *url])
        assert result.exit_code == 1 and "no cold-tier store at missing-" in result.output
        assert not (tmp_path / f"missing-{scheme}").exists()
    url = ["--url", "qdrant+local:///made"]
    _run("remember", "Plays the cello", "--tag", "skill", *who, *url)
    assert _run("recall", "cello", *who, *url).endswith("Plays the cello\n")
