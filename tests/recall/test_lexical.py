"""Stemmed BM25 over a candidate set (engram.recall._lexical)."""

from __future__ import annotations

from engram.recall._lexical import bm25, terms


def test_terms_are_stems_of_content_words() -> None:
    assert terms("Where has Melanie camped?") == terms("melanie camping")
    assert "the" not in terms("the lake") and terms("the lake") == ["lake"]


def test_an_inflected_query_word_matches() -> None:
    scores = bm25("Which books did she read?", ["I loved reading that book", "we went swimming"])
    assert scores[0] > 0 and scores[1] == 0.0


def test_rare_terms_weigh_more_than_common_ones() -> None:
    texts = ["pottery class today", "class was fun", "class again", "class notes"]
    scores = bm25("pottery class", texts)
    assert scores[0] == max(scores)
    assert scores[0] - scores[3] > scores[3]


def test_left_out_words_do_not_score() -> None:
    texts = ["Caroline said hi to Caroline", "a quiet day"]
    assert bm25("What did Caroline do?", texts, leave_out=["Caroline"]) == [0.0, 0.0]
    assert bm25("What did Caroline do?", texts)[0] > 0


def test_nothing_to_match_scores_zero() -> None:
    assert bm25("the and of", ["anything at all"]) == [0.0]
    assert bm25("lake", []) == []


def test_forget_drops_the_stems_and_counts_of_recalled_memories() -> None:
    from engram import Principal
    from engram.recall import ContextBoost, HashEmbedder, _lexical
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    with open_store("memory://", embedder=HashEmbedder()) as store:
        store.put(who.namespace, "k", {"text": "Ann camped with zqmarker friends"})
        store.recall(who, "where did Ann go camping", k=1, context=ContextBoost(pool=5))
        assert _lexical._counted.cache_info().currsize > 0
        report = store.forget(who)
    assert report.caches_cleared >= 1
    assert _lexical._counted.cache_info().currsize == 0
    assert _lexical.stem.cache_info().currsize == 0
