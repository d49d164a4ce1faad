"""The Python API in one process: pause, approval rules, principal scoping, safety nets."""

from __future__ import annotations

from pathlib import Path

import pytest
from analyst_support import PRINCIPAL, REQUEST, ledger_rows

from engram import ConflictError, NotFoundError, Principal
from engram.agent import MarketAnalyst, StepEvent


@pytest.fixture
def analyst(tmp_path: Path) -> MarketAnalyst:
    return MarketAnalyst(home=tmp_path / "home")


def test_run_pauses_before_publish_with_a_reviewed_draft(
    analyst: MarketAnalyst, tmp_path: Path
) -> None:
    events: list[StepEvent] = []
    status = analyst.run(PRINCIPAL, REQUEST, thread_id="t1", on_event=events.append)
    assert status.stage == "awaiting_approval" and status.next_nodes == ("publish",)
    assert status.tickers == ("NVDA", "AMD") and status.tool_calls == 7
    assert status.review == {"verdict": "approve", "score": 1.0, "issues": []}
    assert status.draft and status.draft.startswith("# Market brief: NVDA, AMD")
    nodes = [e.node for e in events]
    assert nodes[:3] == ["router", "planner", "executor"] and nodes[-2:] == ["reporter", "reviewer"]
    assert "publish" not in nodes and ledger_rows(tmp_path / "home") == []


def test_resume_never_passes_the_approval(analyst: MarketAnalyst, tmp_path: Path) -> None:
    analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    assert analyst.resume(PRINCIPAL, "t1").stage == "awaiting_approval"
    assert ledger_rows(tmp_path / "home") == []


def test_approval_is_for_the_exact_draft(analyst: MarketAnalyst, tmp_path: Path) -> None:
    status = analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    assert status.draft_hash is not None
    with pytest.raises(ConflictError, match="not the"):
        analyst.approve(PRINCIPAL, "t1", draft_hash="0" * 12)
    done = analyst.approve(PRINCIPAL, "t1", draft_hash=status.draft_hash[:12], approver="carol")
    assert done.stage == "published" and done.approval and done.approval["approved_by"] == "carol"
    assert done.publication and done.publication["draft_hash"] == status.draft_hash
    with pytest.raises(ConflictError, match="stage: published"):
        analyst.approve(PRINCIPAL, "t1")
    assert len(ledger_rows(tmp_path / "home")) == 1
    assert [p.report for p in analyst.publications(PRINCIPAL)] == [status.draft]


def test_thread_ids_authorise_nothing(analyst: MarketAnalyst, tmp_path: Path) -> None:
    analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    mallory = Principal("acme", "mallory")
    for call in (analyst.status, analyst.approve, analyst.resume, analyst.history):
        with pytest.raises(NotFoundError):
            call(mallory, "t1")
    with pytest.raises(ConflictError):
        analyst.run(mallory, REQUEST, thread_id="t1")
    assert ledger_rows(tmp_path / "home") == []


def test_publish_refuses_without_an_approval_even_if_forced(
    analyst: MarketAnalyst, tmp_path: Path
) -> None:
    analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    config = MarketAnalyst._config(PRINCIPAL, "t1")
    with analyst._graph() as graph, pytest.raises(ConflictError, match="exact draft"):
        graph.invoke(None, config)
    assert ledger_rows(tmp_path / "home") == []


def test_out_of_scope_requests_end_without_a_draft(analyst: MarketAnalyst) -> None:
    status = analyst.run(PRINCIPAL, "What's the weather tomorrow?", thread_id="t2")
    assert status.stage == "out_of_scope" and status.draft is None and status.tool_calls == 0


def test_recalled_facts_travel_in_the_state(analyst: MarketAnalyst) -> None:
    analyst.run(
        PRINCIPAL,
        "Brief on INTC",
        thread_id="t3",
        user_facts=["holds INTC"],
        conventions=["be brief"],
    )
    with analyst._graph() as graph:
        values = graph.get_state(MarketAnalyst._config(PRINCIPAL, "t3")).values
    assert values["user_facts"] == ["holds INTC"] and values["conventions"] == ["be brief"]


def test_history_lists_every_step_oldest_first(analyst: MarketAnalyst) -> None:
    analyst.run(PRINCIPAL, REQUEST, thread_id="t1")
    analyst.approve(PRINCIPAL, "t1")
    history = analyst.history(PRINCIPAL, "t1")
    assert [h.step for h in history] == list(range(-1, len(history) - 1))
    assert history[-1].ran == ("publish",) and history[-1].next_nodes == ()
    assert sum(1 for h in history if h.ran == ("tools",)) == 7
