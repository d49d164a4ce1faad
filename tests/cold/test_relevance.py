"""Absolute relevance floor, stop words in keyword queries, cosine-aware relevance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from engram import Principal
from engram.recall import MiniLMEmbedder
from engram.recall._fusion import rrf
from engram.recall._relevance import is_relevant, keyword_terms, relevance
from engram.stores.cold import Options

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import StoreFactory

ME = Principal("t", "me")


def test_keyword_terms_drop_stop_words_unless_nothing_else() -> None:
    assert keyword_terms("What is the name of Alice's dog?") == ["name", "alice", "dog"]
    assert keyword_terms("Who is it?") == ["who", "is", "it"]
    assert keyword_terms("") == []


def test_relevance_separates_candidates_that_rank_fusion_ties() -> None:
    keyword = ["a", "b"]
    vector = [("b", 0.9), ("a", 0.3)]
    fused = rrf([keyword, [i for i, _ in vector]])
    assert fused["a"] == pytest.approx(fused["b"])
    rel = relevance(keyword, vector)
    assert rel["b"] > rel["a"]
    assert all(0.0 <= v <= 1.0 for v in rel.values())
    assert relevance(["x"], [("x", 0.5)])["x"] == pytest.approx(1.0)


def test_is_relevant_needs_a_close_vector_or_a_content_word() -> None:
    near, far = [("a", 0.6)], [("a", 0.05)]
    assert is_relevant("swallow airspeed", [], near, 0.2)
    assert not is_relevant("swallow airspeed", [], far, 0.2)
    assert is_relevant("swallow airspeed", ["a"], far, 0.2)
    assert not is_relevant("what is it", ["a"], far, 0.2)  # stop words only: no evidence
    assert is_relevant("what is it", ["a"], [], 0.2)  # no embedder: keyword is all we have
    assert is_relevant("anything", [], far, None)


def test_unrelated_question_returns_nothing(make_store: StoreFactory) -> None:
    store = make_store()
    store.remember(ME, "Erin is learning Portuguese on weekday evenings.")
    question = "What is the capital of France?"
    assert store.recall(ME, question) == []
    assert store.recall(ME, "Which language is Erin learning?")  # content words match
    # LangGraph's search keeps its semantics: no floor.
    assert len(store.search(ME.namespace, query=question)) == 1


def test_floor_is_configurable(make_store: StoreFactory) -> None:
    store = make_store(options=Options(min_similarity=None))
    store.remember(ME, "Erin is learning Portuguese on weekday evenings.")
    assert len(store.recall(ME, "What is the capital of France?")) == 1
    store.options = Options(min_similarity=1.01)
    assert store.recall(ME, "Portuguese lessons at night") != []  # keyword match still counts
    assert store.recall(ME, "an evening class") != []  # "evening" finds "evenings"
    assert store.recall(ME, "night classes in a language") == []


def test_stop_words_do_not_match(make_store: StoreFactory) -> None:
    store = make_store(embedder=None)
    store.remember(ME, "The cat sleeps on the sofa.")
    store.remember(ME, "Alice walks her dog at noon.")
    found = store.recall(ME, "What is the dog doing?")
    assert [r.record.text for r in found] == ["Alice walks her dog at noon."]


def test_a_query_of_stop_words_still_searches(make_store: StoreFactory) -> None:
    store = make_store(embedder=None)
    store.remember(ME, "To be or not to be, that is the question.")
    store.remember(ME, "Alice walks her dog at noon.")
    found = store.recall(ME, "to be or not to be")
    assert [r.record.text for r in found] == ["To be or not to be, that is the question."]


def test_minilm_paraphrase_and_unanswerable(
    make_store: StoreFactory, minilm: MiniLMEmbedder
) -> None:
    store = make_store(embedder=minilm)
    for text in (
        "Alice has a border collie called Pixel.",
        "Alice cycles to the office on Tuesdays and Thursdays.",
        "Alice is allergic to peanuts.",
    ):
        store.remember(ME, text)
    assert "border collie" in store.recall(ME, "What kind of dog does Alice own?")[0].record.text
    assert "peanuts" in store.recall(ME, "Which nuts should Alice avoid eating?")[0].record.text
    assert store.recall(ME, "What is the airspeed velocity of an unladen swallow?") == []
