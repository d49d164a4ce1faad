"""Stemmed BM25 over a candidate set (engram.recall._lexical)."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from engram.recall import keyword_coverage
from engram.recall._context import Candidate, _spoken, _stems
from engram.recall._lexical import K1, B, bm25, stored_stems, terms
from engram.recall._relevance import stem


def test_terms_are_stems_of_content_words() -> None:
    assert terms("Where has Melanie camped?") == terms("melanie camping")
    assert "the" not in terms("the lake") and terms("the lake") == ["lake"]


def test_a_livelihood_is_not_where_one_lives() -> None:
    """ "living" stems to "live": "for a living" reads as "job" so that "What do I do for
    a living?" asks nothing of where anyone lives."""
    assert terms("What do I do for a living?") == ["job"]
    assert terms("I draw comics for a living") == terms("draw comic job")
    assert terms("I'm living in Porto") == terms("live porto")
    scores = bm25("What do I do for a living?", ["My sister lives in Toronto", "I love my job"])
    assert scores[0] == 0.0 and scores[1] > 0


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


def _reference_bm25(query: str, texts: list[str]) -> list[float]:
    """Okapi BM25 written out plainly: a Counter per text, every text's every term."""
    wanted = list(dict.fromkeys(terms(query)))
    docs = [Counter(terms(t)) for t in texts]
    mean = max(sum(sum(d.values()) for d in docs) / len(docs), 1e-9)
    out = []
    for d in docs:
        score = 0.0
        for t in wanted:
            if d[t]:
                df = sum(1 for e in docs if t in e)
                idf = math.log(1.0 + (len(docs) - df + 0.5) / (df + 0.5))
                norm = K1 * (1.0 - B + B * (sum(d.values()) / mean))
                score += idf * d[t] * (K1 + 1.0) / (d[t] + norm)
        out.append(score)
    return out


def test_scores_equal_plain_bm25_on_random_texts() -> None:
    rng = random.Random(5)
    words = ["book", "books", "reading", "read", "lake", "lakes", "camp", "camping"]
    words += ["the", "a", "of", "red", "sofa", "dog", "dogs"]
    for _ in range(50):
        texts = [
            " ".join(rng.choices(words, k=rng.randint(0, 9))) for _ in range(rng.randint(1, 30))
        ]
        query = " ".join(rng.choices(words, k=rng.randint(1, 4)))
        assert bm25(query, texts) == _reference_bm25(query, texts)


def test_coverage_weighs_the_query_terms_each_text_holds() -> None:
    texts = ["red sofa", "the dog sleeps", "a red dog on the sofa", "nothing here"]
    coverage = keyword_coverage("red dog", texts)
    assert coverage[2] == 1.0 and coverage[3] == 0.0
    assert 0.0 < coverage[0] < 1.0 and 0.0 < coverage[1] < 1.0
    assert coverage[0] + coverage[1] == pytest.approx(1.0)
    assert keyword_coverage("the of", texts) == [0.0] * 4


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Caroline: I went camping", "Caroline"),
        ("Mel:我们去了 café", "Mel"),
        ("Ann:Running late, Ann said", "Ann"),
        ("Ann: ", "Ann"),
        ("Bob : a spaced label", "Bob "),
        ("Jean-Luc: the Café's résumés", "Jean-Luc"),
        ("no label here", "Ann"),
        ("Ann Lee: two words", "Ann Lee"),
    ],
)
def test_stored_stems_read_as_the_texts_own_without_the_speakers_label(
    text: str, speaker: str
) -> None:
    stored = Candidate("i", 0.0, "", -1, speaker, text, stems=stored_stems(text))
    assert _stems(stored) == _stems(stored._replace(stems=None))
    assert _stems(stored).split() == terms(_spoken(stored))


def test_the_stemmer_gives_the_stems_stored_stores_hold() -> None:
    """Stores keep stems (the keyword index, each version's ``stems``): a stemmer whose
    output changed would leave stored rows unfound by the same words. This pins the
    Snowball English output engram writes; a dependency update that fails it needs a
    migration that re-stems the stores."""
    pairs = {
        "camping": "camp", "camped": "camp", "running": "run", "ran": "ran",
        "generously": "generous", "happiness": "happi", "relational": "relat",
        "organization": "organiz", "organizations": "organiz", "studies": "studi",
        "flies": "fli", "dying": "die", "lying": "lie", "agreed": "agre", "cities": "citi",
        "mornings": "morn", "arguing": "argu", "meetings": "meet",
        "university": "universiti", "skies": "sky", "communication": "communic",
    }  # fmt: skip
    assert {word: stem(word) for word in pairs} == pairs
