"""Hybrid recall and scoring: fusion, weights, min_score, tags, cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from engram import Principal
from engram.errors import InvalidInputError
from engram.recall._fusion import rrf
from engram.recall._scoring import Weights, combine, recency
from engram.stores.cold import LongTermStore, Options

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import Clock, StoreFactory

ME = Principal("t", "me")


def test_rrf_is_normalised() -> None:
    fused = rrf([["a", "b"], ["a", "c"]])
    assert fused["a"] == pytest.approx(1.0)
    assert 0 < fused["c"] < fused["b"] + 1e-12 <= 0.5
    assert rrf([[], []]) == {}
    assert rrf([["x"], []])["x"] == pytest.approx(1.0)


def test_scoring_signals() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert recency(now, now, 30) == 1.0
    assert recency(now - timedelta(days=30), now, 30) == pytest.approx(0.5)
    w = Weights()
    assert combine(w, recency=1, importance=1, relevance=1) == pytest.approx(1.0)
    assert combine(w, recency=0, importance=0, relevance=1) == pytest.approx(0.5)
    with pytest.raises(InvalidInputError):
        Weights(recency=-1)


def test_keyword_and_vector_hits_are_united(store: LongTermStore) -> None:
    store.remember(ME, "Project codename is ZEBRA-42", tags=["profile"])
    store.remember(ME, "Prefers window seats on flights", tags=["preference"])
    store.remember(ME, "Vegetarian, no fish", tags=["constraint"])
    found = store.recall(ME, "ZEBRA-42")
    assert found[0].record.text == "Project codename is ZEBRA-42"
    assert found[0].relevance == pytest.approx(1.0)


def test_importance_and_recency_move_the_order(store: LongTermStore, clock: Clock) -> None:
    store.remember(ME, "old note about gardening", importance=0.1, tags=["profile"])
    clock.advance(days=90)
    store.remember(ME, "fresh note about gardening tools", importance=0.9, tags=["profile"])
    only_relevance = Weights(recency=0, importance=0, relevance=1)
    by_time = store.recall(ME, "gardening", weights=Weights(recency=1, importance=0, relevance=0))
    assert by_time[0].record.text.startswith("fresh")
    assert by_time[1].recency < 0.2
    scores = [r.score for r in store.recall(ME, "gardening", weights=only_relevance)]
    assert scores == sorted(scores, reverse=True)


def test_min_score_and_k(store: LongTermStore) -> None:
    for i in range(12):
        store.remember(ME, f"fact number {i} about rivers", tags=["profile"])
    assert len(store.recall(ME, "rivers", k=5)) == 5
    all_found = store.recall(ME, "rivers", k=12)
    cut = all_found[3].score
    assert all(r.score >= cut for r in store.recall(ME, "rivers", k=12, min_score=cut))
    assert len(store.recall(ME, "rivers", k=12, min_score=cut)) < 12
    with pytest.raises(InvalidInputError):
        store.recall(ME, "rivers", k=0)


def test_tags_filter(store: LongTermStore) -> None:
    store.remember(ME, "likes hiking in the alps", tags=["preference"])
    store.remember(ME, "hiking boots size 43", tags=["profile"])
    found = store.recall(ME, "hiking", tags=["profile"])
    assert [r.record.text for r in found] == ["hiking boots size 43"]


def test_cap_evicts_lowest_value(make_store: StoreFactory, clock: Clock) -> None:
    store = make_store(options=Options(max_items_per_namespace=3))
    store.remember(ME, "unimportant trivia alpha", importance=0.05)
    for word in ("bravo", "charlie"):
        clock.advance(days=1)
        store.remember(ME, f"important fact {word}", importance=0.9)
    clock.advance(days=1)
    result = store.remember(ME, "important fact delta", importance=0.9)
    assert len(result.evicted) == 1
    texts = {r.record.text for r in store.recall(ME, "fact trivia", k=10)}
    assert "unimportant trivia alpha" not in texts and len(texts) == 3


def test_bad_inputs(store: LongTermStore) -> None:
    with pytest.raises(InvalidInputError):
        store.remember(ME, "   ")
    with pytest.raises(InvalidInputError):
        store.remember(ME, "x", importance=2.0)
    with pytest.raises(InvalidInputError):
        store.remember(ME, "x", source="someone")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        store.recall(("t", "bad\x1fns"), "x")
