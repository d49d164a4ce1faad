"""A thread forked from any checkpoint, or cut short between a step's writes and its next
checkpoint (a crash), resumes to the same paused draft.

LangGraph's ``snapshot.next`` leaves out tasks whose writes are already saved, so such a
thread shows no next node although its graph has not ended; it must still resume.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from analyst_support import PRINCIPAL, REQUEST, ledger_rows
from click.testing import CliRunner

from engram.agent import CheckpointInfo, MarketAnalyst, ThreadStatus
from engram.cli import main
from engram.stores.hot import Threads, open_checkpointer


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ThreadStatus]:
    home = tmp_path_factory.mktemp("paused")
    status = MarketAnalyst(home=home).run(PRINCIPAL, REQUEST, thread_id="t1")
    assert status.stage == "awaiting_approval" and status.draft_hash
    return home, status


def _copy(home: Path, to: Path) -> tuple[MarketAnalyst, list[CheckpointInfo]]:
    shutil.copytree(home, to)
    analyst = MarketAnalyst(home=to)
    return analyst, analyst.history(PRINCIPAL, "t1")


def _assert_same_pause(resumed: ThreadStatus, original: ThreadStatus) -> None:
    assert resumed.stage == "awaiting_approval" and resumed.next_nodes == ("publish",)
    assert resumed.draft_hash == original.draft_hash and resumed.draft == original.draft
    assert resumed.tool_calls == original.tool_calls == 7


def test_a_fork_of_every_checkpoint_resumes_to_the_same_draft(
    paused: tuple[Path, ThreadStatus], tmp_path: Path
) -> None:
    analyst, infos = _copy(paused[0], tmp_path / "home")
    assert len(infos) > 10
    with open_checkpointer(analyst.hot_url) as saver:
        for n, info in enumerate(infos):
            Threads(saver).fork("t1", info.checkpoint_id, f"fork-{n}", PRINCIPAL)
    for n, info in enumerate(infos):
        before = analyst.status(PRINCIPAL, f"fork-{n}")
        last = n == len(infos) - 1
        assert before.stage == ("awaiting_approval" if last else "interrupted"), info
        _assert_same_pause(analyst.resume(PRINCIPAL, f"fork-{n}"), paused[1])
    assert [i.checkpoint_id for i in analyst.history(PRINCIPAL, "t1")] == [
        i.checkpoint_id for i in infos
    ]  # the source thread is untouched
    assert ledger_rows(tmp_path / "home") == []


def _cut_after(hot: Path, checkpoint_id: str) -> None:
    """Drop every checkpoint newer than ``checkpoint_id`` (and their writes): the file a
    crash leaves when the step after it saved its writes but not its checkpoint."""
    with sqlite3.connect(hot) as conn:
        for table in ("checkpoints", "writes"):
            conn.execute(f"DELETE FROM {table} WHERE checkpoint_id > ?", (checkpoint_id,))


def test_a_crash_between_a_steps_writes_and_its_checkpoint_resumes(
    paused: tuple[Path, ThreadStatus], tmp_path: Path
) -> None:
    _, infos = _copy(paused[0], tmp_path / "reference")
    for n, info in enumerate(infos[:-1]):
        analyst, _ = _copy(paused[0], tmp_path / f"crash-{n}")
        _cut_after(tmp_path / f"crash-{n}" / "checkpoints.db", info.checkpoint_id)
        with open_checkpointer(analyst.hot_url) as saver:
            latest = Threads(saver).get("t1", None, PRINCIPAL)
        assert latest.config["configurable"]["checkpoint_id"] == info.checkpoint_id
        assert latest.pending_writes, "the finished step's writes survive the crash"
        crashed = analyst.status(PRINCIPAL, "t1")
        assert crashed.stage == "interrupted" and crashed.next_nodes == (), info
        _assert_same_pause(analyst.resume(PRINCIPAL, "t1"), paused[1])


def test_the_cli_resumes_a_thread_forked_by_the_cli(
    paused: tuple[Path, ThreadStatus], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _, infos = _copy(paused[0], home)
    url = f"sqlite:///{home / 'checkpoints.db'}"
    who = ["--tenant", PRINCIPAL.tenant_id, "--user", PRINCIPAL.user_id]
    runner = CliRunner()
    forked = runner.invoke(
        main, ["threads", "fork", "t1", infos[3].checkpoint_id, "--to", "t1-retry", "--url", url]
    )
    assert forked.exit_code == 0, forked.output
    resumed = runner.invoke(
        main, ["agent", "resume", "t1-retry", "--home", str(home), "--no-memory", *who]
    )
    assert resumed.exit_code == 0, resumed.output
    assert "thread t1-retry: awaiting_approval" in resumed.output
    assert f"draft hash: {paused[1].draft_hash[:12]}" in resumed.output  # type: ignore[index]
