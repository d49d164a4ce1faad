"""Real processes on real SQLite files: approval across processes, SIGKILL and resume.

Crash points are chosen deterministically with the agent's hold hook
(``ENGRAM_AGENT_HOLD``): the child blocks at the chosen step after writing its
pid to a marker file, and the test SIGKILLs it there.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from analyst_support import PRINCIPAL, REQUEST, CliRunner, child_env, kill_at, ledger_rows

from engram.agent import MarketAnalyst

pytestmark = pytest.mark.slow


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


@pytest.fixture(scope="module")
def reference_draft(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The draft of an uninterrupted run of the same request."""
    home = tmp_path_factory.mktemp("reference")
    status = MarketAnalyst(home=home).run(PRINCIPAL, REQUEST, thread_id="ref")
    assert status.stage == "awaiting_approval" and status.draft
    return status.draft


def test_pause_in_one_process_approve_in_another_publishes_once(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    paused = _json(cli(home, "run", REQUEST, "--thread", "t1", "--json"))
    assert paused["stage"] == "awaiting_approval" and paused["next_nodes"] == ["publish"]
    assert ledger_rows(home) == []

    approved = _json(
        cli(home, "approve", "t1", "--draft-hash", paused["draft_hash"][:12], "--json")
    )
    assert approved["stage"] == "published"
    rows = ledger_rows(home)
    assert len(rows) == 1 and rows[0][0] == approved["publication"]["idempotency_key"]

    again = cli(home, "approve", "t1", "--draft-hash", paused["draft_hash"], check=False)
    assert again.returncode == 1 and "ConflictError" in again.stderr
    resumed = _json(cli(home, "resume", "t1", "--json"))
    assert resumed["stage"] == "published" and ledger_rows(home) == rows
    reports = MarketAnalyst(home=home).publications(PRINCIPAL)
    assert [r.report for r in reports] == [paused["draft"]]


@pytest.mark.parametrize("tool_call", [1, 2, 3, 7])
def test_sigkill_in_the_executor_resumes_from_the_last_checkpoint(
    cli: CliRunner, tmp_path: Path, tool_call: int, reference_draft: str
) -> None:
    home = tmp_path / "home"
    trace = kill_at(home, tmp_path, f"tool:{tool_call}", "run", REQUEST, "--thread", "t1")

    crashed = MarketAnalyst(home=home).status(PRINCIPAL, "t1")
    before = [h.checkpoint_id for h in MarketAnalyst(home=home).history(PRINCIPAL, "t1")]
    assert crashed.stage == "interrupted" and crashed.next_nodes == ("tools",)
    assert crashed.tool_calls == tool_call  # the executor's request for call N was persisted
    starts_before = Counter(
        line.split()[1] for line in trace.read_text().splitlines() if line.startswith("start")
    )

    resumed = _json(cli(home, "resume", "t1", "--json", env={"ENGRAM_AGENT_TRACE": str(trace)}))
    assert resumed["stage"] == "awaiting_approval"
    assert resumed["draft"] == reference_draft
    after = [h.checkpoint_id for h in MarketAnalyst(home=home).history(PRINCIPAL, "t1")]
    assert after[: len(before)] == before and before[-1] == crashed.checkpoint_id

    events = [line.split() for line in trace.read_text().splitlines()]
    starts = Counter(call for kind, call in events if kind == "start")
    ends = Counter(call for kind, call in events if kind == "end")
    assert len(ends) == 7 and set(ends.values()) == {1}, "every tool call completed exactly once"
    killed = f"call_{tool_call}_"
    for call, count in starts.items():
        assert count == (2 if call.startswith(killed) else 1), call
    assert sum(starts_before.values()) == tool_call

    cli(home, "approve", "t1", "--draft-hash", resumed["draft_hash"])
    assert len(ledger_rows(home)) == 1


def test_sigkill_after_the_outbox_write_never_publishes_twice(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    paused = _json(cli(home, "run", REQUEST, "--thread", "t1", "--json"))
    kill_at(home, tmp_path, "publish", "approve", "t1", "--draft-hash", paused["draft_hash"])

    written = ledger_rows(home)
    assert len(written) == 1
    crashed = MarketAnalyst(home=home).status(PRINCIPAL, "t1")
    assert crashed.stage == "approved" and crashed.publication is None

    resumed = _json(cli(home, "resume", "t1", "--json"))
    assert resumed["stage"] == "published"
    assert resumed["publication"]["idempotency_key"] == written[0][0]
    assert resumed["publication"]["published_at"] == written[0][2]
    assert ledger_rows(home) == written


def test_demo_exits_zero_in_a_fresh_directory(tmp_path: Path) -> None:
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "engram", "demo", "--home", str(tmp_path / ".engram")],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "outbox rows for the thread: 1" in done.stdout
    assert "stage 'published'" in done.stdout and "created=False" in done.stdout
    assert (tmp_path / ".engram" / "checkpoints.db").exists()
    assert (tmp_path / ".engram" / "outbox.db").exists()
    (row,) = ledger_rows(tmp_path / ".engram")  # the demo's publication stays to explore
    assert row[1].startswith("demo-")
