"""The length limit holds for what is stored: a fact padded with a megabyte of spaces,
line breaks or invisible characters is as long as it looks in storage, not as its
canonical form (whitespace collapsed, invisibles removed) reads; and its token count grows
with its length."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Memory, Principal
from engram.policy import WriteCandidate, WritePolicy
from engram.recall import HashEmbedder
from engram.tokens import ApproxCounter

POLICY = WritePolicy()
ALICE = Principal("acme", "alice")
FILLERS = {
    "spaces": " ",
    "line breaks": "\n",
    "tabs": "\t",
    "zero-width spaces": "\u200b",
    "left-to-right marks": "\u200e",
    "variation selectors": "\ufe0f",
}


def fact(text: str) -> WriteCandidate:
    return WriteCandidate(text, ("preference",))


@pytest.mark.parametrize("filler", list(FILLERS.values()), ids=list(FILLERS))
def test_a_fact_padded_past_the_limit_is_rejected(filler: str) -> None:
    for n in (POLICY.max_chars, 1_000_000):
        decision = POLICY.evaluate(fact("I prefer tea" + filler * n + "over coffee"))
        assert not decision.allowed and not decision.held_for_review
        assert decision.reason and "too long" in decision.reason
    assert POLICY.evaluate(fact("I prefer tea" + filler * 10 + " over coffee")).allowed


def test_what_strip_removes_does_not_count() -> None:
    padded = " " * 10_000 + "I prefer tea over coffee" + "\n" * 10_000
    decision = POLICY.evaluate(fact(padded))
    assert decision.allowed and decision.text == "I prefer tea over coffee"


def test_the_limit_is_on_characters_as_stored() -> None:
    text = "I prefer tea  over coffee"  # 25 characters, 24 once spaces are collapsed
    assert WritePolicy(max_chars=25).evaluate(fact(text)).allowed
    assert not WritePolicy(max_chars=24).evaluate(fact(text)).allowed


@pytest.mark.parametrize("filler", list(FILLERS.values()), ids=list(FILLERS))
def test_memory_stores_no_padded_fact(tmp_path: Path, filler: str) -> None:
    with Memory.open(tmp_path, embedder=HashEmbedder()) as memory:
        result = memory.remember(
            ALICE, "I prefer tea" + filler * 1_000_000 + "over coffee", tags=["preference"]
        )
        assert result.action == "rejected" and result.reason and "too long" in result.reason
        assert memory.export(ALICE)["facts"] == []


@pytest.mark.parametrize("filler", [" ", "\n", "\t", " \n", "\r\n"])
def test_a_long_run_of_whitespace_costs_tokens(filler: str) -> None:
    counter = ApproxCounter()
    short = counter.count("I prefer tea" + filler * 10 + "over coffee")
    long = counter.count("I prefer tea" + filler * 1_000_000 + "over coffee")
    assert short <= 8
    assert long >= 1_000_000 * len(filler) // 100
