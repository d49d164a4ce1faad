"""The agent uses memory by default, and a thread remembers how it was started: a thread
started with memory files its brief when approved later without a flag, one started with
``--no-memory`` files nothing, and a contradicting flag is refused before anything happens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from analyst_support import PRINCIPAL, REQUEST, ledger_rows
from click.testing import CliRunner

from engram import ConfigError, Memory
from engram.agent import MarketAnalyst
from engram.cli import main
from engram.recall import HashEmbedder

WHO = ["--tenant", PRINCIPAL.tenant_id, "--user", PRINCIPAL.user_id]


def _agent(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(main, ["agent", *args, "--home", str(home), *WHO])
    return result


def _ok(home: Path, *args: str) -> dict[str, Any]:
    result = _agent(home, *args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _stored(home: Path) -> tuple[list[str], list[str]]:
    """Fact texts and document paths the memory layer holds for the user."""
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        exported = memory.export(PRINCIPAL)
    return [f["text"] for f in exported["facts"]], [d["path"] for d in exported["documents"]]


def test_a_thread_run_by_default_uses_memory_and_files_its_brief_when_approved(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    run = _agent(
        home,
        "run",
        REQUEST,
        "--thread",
        "t1",
        "--embedder",
        "hash",
    )
    assert run.exit_code == 0, run.output
    assert "[memory] recalled 0 user facts" in run.output
    paused = _ok(home, "status", "t1")
    assert paused["uses_memory"] is True and _stored(home) == ([], [])
    done = _ok(home, "approve", "t1", "--draft-hash", paused["draft_hash"], "--embedder", "hash")
    assert done["stage"] == "published"
    facts, documents = _stored(home)
    assert facts == ["Follows NVDA, AMD (asked for analysis)"]
    assert sorted(documents) and all(d.startswith("users/alice/research/") for d in documents)


def test_a_thread_started_without_memory_files_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    paused = _ok(home, "run", REQUEST, "--thread", "t1", "--no-memory")
    assert paused["uses_memory"] is False
    done = _ok(home, "approve", "t1", "--draft-hash", paused["draft_hash"], "--embedder", "hash")
    assert done["stage"] == "published" and len(ledger_rows(home)) == 1
    assert not (home / "memory.db").exists() and not (home / "documents").exists()


@pytest.mark.parametrize(
    ("started", "then"),
    [
        ("--memory", ["approve", "t1", "--approve-unseen", "--no-memory"]),
        ("--no-memory", ["resume", "t1", "--memory"]),
        ("--no-memory", ["approve", "t1", "--approve-unseen", "--memory"]),
    ],
)
def test_a_flag_that_contradicts_the_thread_is_refused(
    tmp_path: Path, started: str, then: list[str]
) -> None:
    home = tmp_path / "home"
    _ok(home, "run", REQUEST, "--thread", "t1", started, "--embedder", "hash")
    result = _agent(home, *then, "--embedder", "hash")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert result.output.startswith("Error: ConflictError: thread 't1' was started with")
    assert ledger_rows(home) == []
    assert MarketAnalyst(home=home).status(PRINCIPAL, "t1").stage == "awaiting_approval"


def test_the_api_refuses_to_approve_a_memory_thread_without_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        paused = MarketAnalyst(home=home, memory=memory).run(PRINCIPAL, REQUEST, thread_id="t1")
    assert paused.uses_memory
    bare = MarketAnalyst(home=home)
    with pytest.raises(ConfigError, match="started with memory"):
        bare.approve(PRINCIPAL, "t1", draft_hash=paused.draft_hash)
    with pytest.raises(ConfigError, match="started with memory"):
        bare.resume(PRINCIPAL, "t1")
    assert ledger_rows(home) == [] and bare.status(PRINCIPAL, "t1").stage == "awaiting_approval"
