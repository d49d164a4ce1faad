"""Facts learned in a conversation: rules by default, the chat model when configured;
and the expiry policy applied to every remembered fact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from engram import Principal
from engram.agent._knowledge import extract_facts, extract_rules, remember_conversation
from engram.memory import Memory

if TYPE_CHECKING:
    from conftest import Clock

ALICE = Principal("acme", "alice")

REQUEST = "Analyse NVDA. I'm a cautious investor and I like detailed briefs. Thanks!"


def test_rules_extract_one_fact_per_slot_from_first_person_sentences() -> None:
    found = extract_rules(REQUEST, ["NVDA"])
    slots = {o.slot: o.text for o in found}
    assert set(slots) == {"risk_tolerance", "depth", None}
    assert slots[None] == "Follows NVDA (asked for analysis)"
    assert slots["risk_tolerance"] == "Risk tolerance: cautious"
    assert slots["depth"] == "Preferred depth: detailed"
    quotes = {o.slot: o.quote for o in found}
    assert quotes["risk_tolerance"] == "I'm a cautious investor and I like detailed briefs."
    assert extract_rules("NVDA is a cautious pick for detailed readers.") == []


def test_the_chat_model_extracts_when_configured_and_rules_are_the_fallback() -> None:
    model = FakeListChatModel(
        responses=['[{"text": "Prefers dividend payers", "slot": "style"}]', "no JSON here"]
    )
    by_model = extract_facts(REQUEST, ["NVDA"], model)
    assert [(o.text, o.slot) for o in by_model] == [("Prefers dividend payers", "style")]
    fallback = extract_facts(REQUEST, ["NVDA"], model)
    assert {o.slot for o in fallback} == {"risk_tolerance", "depth", None}


def test_remembered_conversation_facts_carry_provenance(memory: Memory) -> None:
    results = remember_conversation(
        memory,
        ALICE,
        REQUEST,
        tickers=["NVDA"],
        thread_id="t1",
        checkpoint_id="c7",
        message_ids=["m1"],
    )
    assert [r.action for r in results] == ["added"] * 3
    for fact in memory.facts(ALICE):
        assert (fact.provenance.thread_id, fact.provenance.checkpoint_id) == ("t1", "c7")
        assert fact.provenance.message_ids == ("m1",)
    said = {f.text: f.provenance.quote for f in memory.facts(ALICE)}
    assert said["Risk tolerance: cautious"] == (
        "I'm a cautious investor and I like detailed briefs."
    )


def test_a_quote_kept_as_provenance_is_redacted_like_the_fact(memory: Memory) -> None:
    memory.remember(
        ALICE, "Risk tolerance: cautious", quote="I'm cautious, mail me at al@example.com"
    )
    [fact] = memory.facts(ALICE)
    assert fact.provenance.quote is not None and "al@example.com" not in fact.provenance.quote
    assert "al@example.com" not in memory.export_json(ALICE)


def test_the_expiry_policy_applies_to_every_fact(home, clock: Clock) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    with Memory.open(home, clock=clock, fact_ttl=timedelta(days=30)) as memory:
        memory.remember(ALICE, "Watching NVDA earnings this quarter", tags=("fact",))
        assert memory.recall(ALICE, "NVDA earnings").items
        clock.advance(days=31)
        assert memory.recall(ALICE, "NVDA earnings").items == ()
        assert memory.sweep() == 1
        assert memory.facts(ALICE) == []
