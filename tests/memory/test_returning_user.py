"""Must-show: a returning user, a week later in a new thread, gets a plan that follows
the preference stated in the first thread, and the recalled facts carry provenance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engram import Principal
from engram.agent import MarketAnalyst, StepEvent
from engram.memory import Memory

if TYPE_CHECKING:
    from conftest import Clock

ALICE = Principal("acme", "alice")
FIRST = (
    "Analyse NVDA for me. I'm a conservative investor and I want a competitor analysis "
    "in every brief."
)


def _publish(analyst: MarketAnalyst, request: str, thread_id: str) -> list[StepEvent]:
    events: list[StepEvent] = []
    status = analyst.run(ALICE, request, thread_id=thread_id, on_event=events.append)
    assert status.stage == "awaiting_approval"
    published = analyst.approve(ALICE, thread_id, on_event=events.append)
    assert published.stage == "published"
    return events


def test_update_my_nvda_analysis_a_week_later(home: Path, memory: Memory, clock: Clock) -> None:
    memory.documents.write(ALICE, "conventions/briefs.md", "# Briefs\n\n- Cite the data set\n")
    analyst = MarketAnalyst(home=home, memory=memory)
    _publish(analyst, FIRST, "week-1")
    first_checkpoints = set(memory.lineage(ALICE, "week-1"))
    assert memory.documents.exists(ALICE, "users/alice/research/NVDA-2026-03.md")

    clock.advance(days=7)
    events: list[StepEvent] = []
    status = analyst.run(
        ALICE, "Update my NVDA analysis", thread_id="week-2", on_event=events.append
    )

    assert "conservative risk tolerance" in "\n".join(status.plan)
    assert "competitor analysis: rank" in "\n".join(status.plan)
    assert any(e.node == "memory" and "recalled" in e.summary for e in events)

    block = memory.recall(ALICE, "Update my NVDA analysis", 600, include_profile=True)
    risk = [i for i in block.items if "Risk tolerance: conservative" in i.text]
    assert len(risk) == 1 and risk[0].kind == "profile"
    assert risk[0].thread_id == "week-1" and risk[0].checkpoint_id in first_checkpoints
    assert f'thread_id="week-1" checkpoint_id="{risk[0].checkpoint_id}"' in block.text
    assert block.tokens_used <= 600


def test_a_plan_without_memory_is_not_tailored(home: Path) -> None:
    status = MarketAnalyst(home=home).run(ALICE, "Update my NVDA analysis", thread_id="t")
    assert not any("Tailored" in line for line in status.plan)


def test_two_users_briefs_on_one_ticker_stay_apart(home: Path, memory: Memory) -> None:
    bob = Principal("acme", "bob")
    analyst = MarketAnalyst(home=home, memory=memory)
    for principal, thread_id in ((ALICE, "alice-nvda"), (bob, "bob-nvda")):
        status = analyst.run(principal, "Analyse NVDA for me", thread_id=thread_id)
        analyst.approve(principal, thread_id, draft_hash=status.draft_hash)
    alice_brief = "users/alice/research/NVDA-2026-03.md"
    bob_brief = "users/bob/research/NVDA-2026-03.md"
    assert memory.documents.read(bob, bob_brief).metadata["thread_id"] == "bob-nvda"
    assert memory.documents.read(ALICE, alice_brief).metadata["thread_id"] == "alice-nvda"
    assert [i.path for i in memory.documents.list(bob, "**/research/**")] == [bob_brief]
    report = memory.forget(ALICE)
    assert alice_brief in report.documents and bob_brief not in report.documents
    assert memory.documents.read(bob, bob_brief).metadata["user_id"] == "bob"
    assert not memory.documents.exists(ALICE, alice_brief)
