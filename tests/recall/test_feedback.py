"""Pseudo-relevance feedback in the re-ranking's keyword leg: a two-hop answer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engram.recall._context import DEFAULT_CONTEXT, Candidate, rerank
from engram.recall._feedback import entities, expansion

QUESTION = "Which city is the home of the person who gave Caroline her violin?"

# (id, text, cosine with the question): the answer ("lisbon") shares no word with the
# question, only the name of the person the first two turns are about.
TURNS = [
    ("gift", "My aunt Rosalind gave me a violin for my birthday.", 0.55),
    ("practice", "I practise on the violin Rosalind gave me every evening.", 0.50),
    ("teacher", "My violin teacher says I should practise scales.", 0.45),
    ("hike", "We went hiking near the lake on Sunday.", 0.30),
    ("cake", "Mel baked a lemon cake for the whole family.", 0.28),
    ("city", "The city was so busy during the festival.", 0.27),
    ("dog", "The dog chewed my new shoes again.", 0.26),
    ("answer", "Rosalind settled in Lisbon last spring, near the harbour.", 0.20),
]


def _candidates() -> list[Candidate]:
    return [
        Candidate(i, 0.0, "S1", n, "Caroline", f"Caroline: {text}", cos)
        for n, (i, text, cos) in enumerate(TURNS)
    ]


def _top(boost_feedback: float, k: int = 3) -> list[str]:
    boost = replace(DEFAULT_CONTEXT, feedback=boost_feedback)
    return [i for i, _ in rerank(QUESTION, _candidates(), boost)][:k]


def test_feedback_finds_the_second_hop_the_first_pass_misses() -> None:
    # Four turns match the question's words; without feedback the answer ranks below
    # the unrelated turns too (its cosine is the lowest), with it right after the matches.
    assert _top(0.0, 8)[-1] == "answer"
    assert "answer" not in _top(0.0, 5)
    assert _top(0.5, 5)[-1] == "answer"


def test_feedback_keeps_the_direct_matches_first() -> None:
    assert _top(0.5, 2) == _top(0.0, 2) == ["gift", "practice"]


def test_expansion_takes_stems_the_top_texts_share_and_the_query_lacks() -> None:
    texts = [text for _, text, _ in TURNS]
    extra = expansion({"violin", "gave", "give"}, texts, [0, 1], size=5, weight=0.4)
    assert "rosalind" in extra
    assert max(extra.values()) == pytest.approx(0.4)
    assert "violin" not in extra and "birthday" not in extra  # in the query / one text only


def test_expansion_is_empty_when_off_or_nothing_qualifies() -> None:
    texts = [text for _, text, _ in TURNS]
    assert expansion(set(), texts, [0, 1], size=5, weight=0.0) == {}
    assert expansion(set(), texts, [], size=5, weight=0.4) == {}
    assert expansion(set(), texts, [3, 4], size=5, weight=0.4) == {}  # no shared stem


def _recall_keys(feedback: float, k: int) -> list[str]:
    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    items = [
        (who.namespace, i, {"text": f"Caroline: {t}", "speaker": "Caroline", "position": n})
        for n, (i, t, _) in enumerate(TURNS)
    ]
    boost = replace(DEFAULT_CONTEXT, feedback=feedback)
    with open_store("memory://", embedder=HashEmbedder()) as store:
        store.put_many(items)
        return [h.record.key for h in store.recall(who, QUESTION, k=k, context=boost)]


def test_recall_with_feedback_ranks_the_second_hop_higher() -> None:
    without, with_ = _recall_keys(0.0, len(TURNS)), _recall_keys(0.5, len(TURNS))
    assert with_.index("answer") < without.index("answer")


def test_entities_are_capitalised_words_inside_sentences() -> None:
    found = entities("Rosalind went home. Yesterday Bob met Alice in Lisbon! Then the dog")
    assert found == {"bob", "alic", "lisbon"}  # stems; sentence starts are not names


def test_names_only_expansion_keeps_the_shared_name_and_drops_other_words() -> None:
    texts = [
        "I met Rosalind at the harbour market today.",
        "Rosalind and I walked along the harbour market.",
    ]
    both = expansion(set(), texts, [0, 1], size=5, weight=0.4)
    names = expansion(set(), texts, [0, 1], size=5, weight=0.4, names_only=True)
    assert {"rosalind", "harbour", "market"} <= set(both)
    assert set(names) == {"rosalind"}
