"""What follows a publication survives a crash, and an approval belongs to its thread.

- A kill after the report is published but before its brief is filed and the user's facts
  remembered leaves the thread published with that step pending; ``resume`` (or
  ``approve`` again) finishes it, once.
- A fork of a thread approved but not yet published asks again: the approval in its state
  names the thread it was given on.
- ``approve`` checks its draft hash and approver whatever the stage, and the request's text.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from analyst_support import PRINCIPAL, REQUEST, CliRunner, kill_at, ledger_rows

from engram import ConflictError, InvalidInputError, Memory
from engram.agent import MarketAnalyst
from engram.recall import HashEmbedder
from engram.stores.hot import Threads, open_checkpointer

pytestmark = pytest.mark.slow

HASH = ("--embedder", "hash")


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


def _kept(home: Path) -> tuple[list[str], list[str]]:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        exported = memory.export(PRINCIPAL)
    return [f["text"] for f in exported["facts"]], [d["path"] for d in exported["documents"]]


def test_a_kill_between_publishing_and_filing_is_finished_by_resume(
    cli: CliRunner, tmp_path: Path
) -> None:
    reference, home = tmp_path / "reference", tmp_path / "home"
    for where in (reference, home):
        paused = _json(cli(where, "run", REQUEST, "--thread", "t1", *HASH, "--json"))
    cli(reference, "approve", "t1", "--draft-hash", paused["draft_hash"], *HASH)
    expected = _kept(reference)
    assert expected[0] and expected[1]  # the uninterrupted run filed and remembered

    kill_at(home, tmp_path, "file", "approve", "t1", "--draft-hash", paused["draft_hash"], *HASH)
    crashed = _json(cli(home, "status", "t1", "--json"))
    assert crashed["stage"] == "published" and crashed["memory_pending"] is True
    assert _kept(home) == ([], []) and len(ledger_rows(home)) == 1

    done = _json(cli(home, "resume", "t1", *HASH, "--json"))
    assert done["stage"] == "published" and done["memory_pending"] is False
    assert _kept(home) == expected
    cli(home, "resume", "t1", *HASH)  # nothing left to do: nothing twice
    assert _kept(home) == expected and len(ledger_rows(home)) == 1


def test_approving_again_after_that_kill_finishes_the_step_too(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    paused = _json(cli(home, "run", REQUEST, "--thread", "t1", *HASH, "--json"))
    kill_at(home, tmp_path, "file", "approve", "t1", "--draft-hash", paused["draft_hash"], *HASH)
    again = _json(cli(home, "approve", "t1", "--draft-hash", paused["draft_hash"], *HASH, "--json"))
    assert again["memory_pending"] is False
    facts, documents = _kept(home)
    assert facts and documents and len(ledger_rows(home)) == 1
    refused = cli(home, "approve", "t1", "--draft-hash", paused["draft_hash"], *HASH, check=False)
    assert refused.returncode != 0 and "not awaiting approval" in refused.stderr


def test_a_fork_of_an_approved_thread_asks_again(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    paused = _json(cli(home, "run", REQUEST, "--thread", "t1", "--no-memory", "--json"))
    kill_at(home, tmp_path, "publish", "approve", "t1", "--draft-hash", paused["draft_hash"])
    analyst = MarketAnalyst(home=home)
    assert analyst.status(PRINCIPAL, "t1").stage == "approved"
    latest = analyst.history(PRINCIPAL, "t1")[-1].checkpoint_id
    with open_checkpointer(analyst.hot_url) as saver:
        Threads(saver).fork("t1", latest, "t1-copy", PRINCIPAL)

    copy = analyst.status(PRINCIPAL, "t1-copy")
    assert copy.stage == "awaiting_approval"
    assert analyst.resume(PRINCIPAL, "t1-copy").stage == "awaiting_approval"
    assert [row[1] for row in ledger_rows(home)] == ["t1"]  # the crashed approve's row only


def test_approve_checks_its_hash_and_approver_in_every_stage(tmp_path: Path) -> None:
    analyst = MarketAnalyst(home=tmp_path)
    paused = analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    with pytest.raises(InvalidInputError):
        analyst.approve(PRINCIPAL, "t1", approver="eve\n\x1b[2Jroot")
    with pytest.raises(InvalidInputError):
        analyst.approve(PRINCIPAL, "t1", approver="eve\x00")
    with pytest.raises(InvalidInputError):
        analyst.run(PRINCIPAL, "Compare NVDA \udcff and AMD", thread_id="t2")
    with pytest.raises(ConflictError):
        analyst.approve(PRINCIPAL, "t1", draft_hash="0000000000000000")
    assert analyst.status(PRINCIPAL, "t1").stage == "awaiting_approval"
    assert paused.draft_hash
