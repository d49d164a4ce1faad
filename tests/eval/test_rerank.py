"""Session/neighbour/speaker re-ranking on hand-made candidates, and as a recall option."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from engram.recall._context import (
    CONVERSATION,
    NO_DIALOGUE,
    Candidate,
    ContextBoost,
    named_speakers,
    rerank,
    topic_query,
)
from engram.stores.cold import Recalled


def _w(speaker: float, neighbours: float, session: float, window: int = 1) -> ContextBoost:
    return ContextBoost(
        speaker=speaker, neighbours=neighbours, session=session, window=window, lexical=False
    )


def _ids(ranked: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in ranked]


def _c(id_: str, rel: float, session: str, pos: int, speaker: str = "Ann") -> Candidate:
    return Candidate(id_, rel, session, pos, speaker)


def _put_turns(store: Any, who: Any, turns: list[tuple[str, int, str, str]]) -> None:
    """Store ``(session, position, speaker, text)`` turns as one user's memories."""
    store.put_many(
        [
            (who.namespace, f"{s}:{p}", {"text": t, "session": s, "position": p, "speaker": sp})
            for s, p, sp, t in turns
        ]
    )


def test_named_speakers_are_whole_names() -> None:
    assert named_speakers("When did Ann move?", ["Ann", "Bob"]) == ["Ann"]
    assert named_speakers("Did Ann meet Bob?", ["Ann", "Bob"]) == ["Ann", "Bob"]
    assert named_speakers("What did Annie say?", ["Ann", "Bob"]) == []


def test_without_boosts_the_order_is_relevance() -> None:
    cands = [_c("a", 0.9, "S1", 0), _c("b", 0.5, "S2", 7), _c("c", 0.4, "S3", 3)]
    assert _ids(rerank("q", cands, _w(0, 0, 0))) == ["a", "b", "c"]


def test_a_neighbour_of_a_strong_match_climbs() -> None:
    cands = [_c("hit", 0.9, "S1", 4), _c("far", 0.5, "S2", 9), _c("next", 0.45, "S1", 5)]
    assert _ids(rerank("q", cands, _w(0, 0.3, 0))) == ["hit", "next", "far"]
    other_session = [_c("hit", 0.9, "S1", 4), _c("far", 0.5, "S2", 9), _c("x", 0.45, "S3", 5)]
    assert _ids(rerank("q", other_session, _w(0, 0.3, 0))) == ["hit", "far", "x"]


def test_session_and_speaker_boosts() -> None:
    cands = [_c("s1", 0.5, "S1", 0), _c("s2", 0.45, "S2", 0), _c("s2b", 0.9, "S2", 9)]
    assert _ids(rerank("q", cands, _w(0, 0, 0.5)))[:2] == ["s2b", "s2"]
    bob = [_c("ann", 0.5, "S1", 0, "Ann"), _c("bob", 0.4, "S2", 0, "Bob")]
    assert _ids(rerank("What does Bob like?", bob, _w(0.5, 0, 0))) == ["bob", "ann"]
    assert _ids(rerank("What do they like?", bob, _w(0.5, 0, 0))) == ["ann", "bob"]


def test_every_speaker_a_query_names_gets_the_speaker_boost() -> None:
    """A memory of two conversations: "Did Ann and Bob both ...?" lifts Ann's and Bob's
    turns above a more relevant one of Cy's (the other conversation), and keeps their
    own order."""
    turns = [
        _c("cy", 0.6, "S9", 0, "Cy"),
        _c("ann", 0.5, "S1", 0, "Ann"),
        _c("bob", 0.45, "S1", 1, "Bob"),
    ]
    query = "Did Ann and Bob both go hiking?"
    assert _ids(rerank(query, turns, _w(0.5, 0, 0))) == ["ann", "bob", "cy"]
    assert _ids(rerank("Did anyone go hiking?", turns, _w(0.5, 0, 0))) == ["cy", "ann", "bob"]


def _as_candidate(hit: Recalled, topic: float | None = None) -> Candidate:
    """A recalled turn as the re-ranker sees it, built by hand from its stored value."""
    value = hit.record.value
    return Candidate(
        hit.record.id,
        hit.relevance,
        value["session"],
        value["position"],
        value["speaker"],
        hit.record.text,
        hit.similarity,
        topic,
    )


def test_recall_context_option_reranks_the_fused_candidates() -> None:
    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    query = "what lemon dish did Ann cook for the picnic"
    turns = [
        ("S1", 0, "Ann", "Ann: what did you cook for the picnic"),
        ("S1", 1, "Bob", "Bob: a lemon tart with fresh berries"),
        ("S2", 0, "Ann", "Ann: the weather was grey all week"),
        ("S2", 1, "Bob", "Bob: lemon trees need sun and cook slowly"),
    ]
    boost = replace(CONVERSATION, pool=4)
    with open_store("memory://", embedder=HashEmbedder()) as store:
        _put_turns(store, who, turns)
        plain = store.recall(who, query, k=4, context=None)
        boosted = store.recall(who, query, k=4, context=boost)
    candidates = [_as_candidate(r) for r in plain]
    expected = _ids(rerank(query, candidates, boost))
    assert [r.record.id for r in boosted] == expected
    assert [r.record.key for r in boosted] != [r.record.key for r in plain]
    scores = [r.score for r in boosted]
    assert scores[0] > 0 and all(0 <= s <= 1 for s in scores)
    assert all(r.similarity is not None for r in plain)


def _t(id_: str, session: str, pos: int, text: str, sim: float, speaker: str = "Ann") -> Candidate:
    return Candidate(id_, sim, session, pos, speaker, f"{speaker}: {text}", sim)


def test_lexical_step_matches_inflected_words() -> None:
    cands = [
        _t("close", "S1", 0, "we had a quiet weekend at home", 0.42),
        _t("camp", "S2", 0, "we went camping by the lake", 0.40),
    ]
    query = "Where has Ann camped?"
    assert _ids(rerank(query, cands, ContextBoost(neighbours=0, session=0))) == ["camp", "close"]
    assert _ids(rerank(query, cands, _w(0, 0, 0))) == ["close", "camp"]


def test_lexical_step_leaves_a_named_speaker_to_the_speaker_boost() -> None:
    cands = [
        _t("names", "S1", 0, "Bob, Bob and Bob again, hi Bob", 0.40, "Ann"),
        _t("dog", "S2", 0, "my dog loves the park", 0.40, "Bob"),
    ]
    boost = ContextBoost(speaker=0, neighbours=0, session=0)
    assert _ids(rerank("What dog does Bob have?", cands, boost)) == ["dog", "names"]


def test_lexical_step_without_texts_keeps_the_fused_relevance() -> None:
    cands = [_c("a", 0.9, "S1", 0), _c("b", 0.5, "S2", 7)]
    assert _ids(rerank("q", cands, ContextBoost(neighbours=0, session=0))) == ["a", "b"]


def test_window_reaches_two_turns_away_at_half_weight() -> None:
    cands = [_c("hit", 0.9, "S1", 4), _c("far", 0.5, "S2", 9), _c("two", 0.2, "S1", 6)]
    assert _ids(rerank("q", cands, _w(0, 0.3, 0, window=1))) == ["hit", "far", "two"]
    ranked = dict(rerank("q", cands, _w(0, 1.0, 0, window=2)))
    assert ranked["two"] == 0.2 + 0.9 / 2
    assert _ids(rerank("q", cands, _w(0, 1.0, 0, window=2))) == ["hit", "two", "far"]


def test_topic_query_drops_the_named_speakers() -> None:
    cands = [_t("a", "S1", 0, "hi", 0.5, "Ann"), _t("b", "S1", 1, "yo", 0.5, "Bob")]
    boost = ContextBoost()
    assert (
        topic_query("What did Ann's brother give Bob?", cands, boost) == "What did brother give ?"
    )
    assert topic_query("What did the brother give?", cands, boost) is None
    assert topic_query("What did Ann say?", cands, ContextBoost(topic=0)) is None
    assert topic_query("What did Ann say?", cands, ContextBoost(lexical=False)) is None


def test_topic_cosines_blend_into_the_lexical_step() -> None:
    plain = [
        Candidate("name", 0.5, "S1", 0, "Ann", "Ann: hello there Ann", 0.50, 0.10),
        Candidate("dog", 0.4, "S2", 0, "Ann", "Ann: a long walk", 0.45, 0.60),
    ]
    query = "Where did Ann go?"
    assert _ids(rerank(query, plain, ContextBoost(neighbours=0, session=0, topic=0))) == [
        "name",
        "dog",
    ]
    assert _ids(rerank(query, plain, ContextBoost(neighbours=0, session=0))) == ["dog", "name"]


def test_recall_with_context_recalls_the_topic_when_the_query_names_a_speaker() -> None:
    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    turns = [
        ("S1", 0, "Ann", "Ann: Ann here, Ann again, hello from Ann"),
        ("S2", 0, "Ann", "Ann: the tent stood by the lake all week"),
        ("S3", 0, "Bob", "Bob: lake fishing with Ann"),
    ]
    boost = ContextBoost(pool=3)
    with open_store("memory://", embedder=HashEmbedder()) as store:
        _put_turns(store, who, turns)
        plain = store.recall(who, "Where did Ann put the tent?", k=3, context=None)
        topic = {
            r.record.id: r.similarity
            for r in store.recall(who, "Where did put the tent?", k=3, context=None)
        }
        boosted = store.recall(who, "Where did Ann put the tent?", k=3, context=boost)
    candidates = [_as_candidate(r, topic[r.record.id]) for r in plain]
    expected = rerank("Where did Ann put the tent?", candidates, boost)
    top = expected[0][1]
    assert [r.record.id for r in boosted] == [i for i, _ in expected]
    ratios = [r.score / boosted[0].score for r in boosted]
    shares = [s / top for _, s in expected]
    assert ratios[:2] == pytest.approx(shares[:2], rel=1e-6)
    # (a score is its share of the best, capped by how well the item itself matches)
    assert all(r <= share * (1 + 1e-6) for r, share in zip(ratios, shares, strict=True))
    assert any(topic[i] != r.similarity for r in plain for i in [r.record.id])
    assert boosted[0].record.key == "S2:0"


def test_every_candidate_gets_its_own_topic_cosine() -> None:
    """The query's topic (the query without the speaker it names) is scored against the
    stored vector of every candidate of the pool: each gets its own topic cosine, which
    is blended with its cosine with the query (whatever the speaker's name alone adds to
    that); a candidate without a vector keeps its own."""
    from collections.abc import Sequence
    from datetime import UTC, datetime

    from engram.recall import Weights
    from engram.stores.cold._candidates import Hit, Ranking, in_context
    from engram.stores.cold.contract import Excerpt

    when = datetime(2026, 1, 1, tzinfo=UTC)

    def turn(id_: str, similarity: float) -> tuple[Hit, Excerpt]:
        value = {"text": "Ann: hello again", "session": "S1", "position": 0, "speaker": "Ann"}
        hit = Hit(id_, 0.5, 0.5, 1.0, 1.0, similarity, 1, 1)
        return hit, Excerpt(id_, value["text"], value, when, when, 1.0)

    found = [turn("named", 0.70), turn("topical", 0.50)]
    asked: list[tuple[str, list[str]]] = []

    def cosines(text: str, ids: Sequence[str]) -> dict[str, float]:
        asked.append((text, list(ids)))
        return {"topical": 0.60, "named": 0.30}

    ranking = Ranking(Weights(), 0.2)
    ranked = in_context("Where did Ann go?", found, ContextBoost(), cosines, ranking, 2)
    assert asked == [("Where did go?", ["named", "topical"])]
    assert [hit.id for hit, _, _ in ranked] == ["topical", "named"]  # 0.56 against 0.46

    def no_vector(text: str, ids: Sequence[str]) -> dict[str, float]:
        return {"topical": 0.60}  # "named" has no stored vector

    ranked = in_context("Where did Ann go?", found, ContextBoost(), no_vector, ranking, 2)
    assert [hit.id for hit, _, _ in ranked] == ["named", "topical"]  # its own 0.70 stands


def _d(id_: str, session: str, when: str, rel: float) -> Candidate:
    return Candidate(id_, rel, session, 0, "Ann", date=when)


def test_date_step_lifts_turns_said_in_the_time_the_query_names() -> None:
    cands = [
        _d("june", "S1", "1:56 pm on 8 June, 2023", 0.9),
        _d("october", "S2", "2:44 pm on 4 October, 2023", 0.6),
        _d("undated", "S3", "", 0.5),
    ]
    boost = ContextBoost(speaker=0, neighbours=0, session=0, lexical=False, date=0.6)
    query = "Which city was Ann at on October 3, 2023?"
    assert _ids(rerank(query, cands, boost)) == ["october", "june", "undated"]
    assert _ids(rerank("Which city was Ann at?", cands, boost)) == ["june", "october", "undated"]
    no_slack = ContextBoost(
        speaker=0, neighbours=0, session=0, lexical=False, date=0.6, date_slack_days=0
    )
    assert _ids(rerank(query, cands, no_slack)) == ["june", "october", "undated"]
    off = ContextBoost(speaker=0, neighbours=0, session=0, lexical=False, date=0)
    assert _ids(rerank(query, cands, off)) == ["june", "october", "undated"]


def test_recall_context_option_reads_the_stored_date_field() -> None:
    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    turns = [
        ("S1", "8 May, 2023", "Ann: yesterday I went to the city museum"),
        ("S2", "4 October, 2023", "Ann: yesterday I saw the museum in the city centre"),
    ]
    values = [
        (who.namespace, s, {"text": t, "session": s, "position": 0, "speaker": "Ann", "when": d})
        for s, d, t in turns
    ]
    query = "Did Ann go to the city museum on 3 October 2023?"
    boost = ContextBoost(pool=2, neighbours=0, session=0, date=1.0, date_field="when")
    with open_store("memory://", embedder=HashEmbedder()) as store:
        store.put_many(values)
        plain = store.recall(who, query, k=2, context=replace(boost, date=0.0))
        dated = store.recall(who, query, k=2, context=boost)
    assert [r.record.key for r in plain] == ["S1", "S2"]
    assert [r.record.key for r in dated] == ["S2", "S1"]


def test_date_step_falls_back_to_when_a_memory_became_valid() -> None:
    from datetime import UTC, datetime

    from engram import Principal
    from engram.recall import HashEmbedder
    from engram.stores.cold import open_store

    who = Principal("t", "u")
    query = "What did Ann say about the city museum in October 2023?"
    boost = ContextBoost(pool=2, neighbours=0, session=0, date=1.0)
    with open_store("memory://", embedder=HashEmbedder()) as store:
        for day, text in [
            (datetime(2023, 5, 8, tzinfo=UTC), "Ann: yesterday I saw the museum in the city"),
            (datetime(2023, 10, 4, tzinfo=UTC), "Ann: yesterday I went to the city museum"),
        ]:
            store.remember(who, text, tags=["event"], valid_from=day)
        plain = store.recall(who, query, k=2, context=replace(boost, date=0.0))
        dated = store.recall(who, query, k=2, context=boost)
    assert [r.record.valid_from.month for r in plain] == [5, 10]
    assert [r.record.valid_from.month for r in dated] == [10, 5]


def test_a_dialogue_gets_the_neighbour_and_session_steps_by_default() -> None:
    """Two speakers or more make a dialogue, where the answer sits in the turn after the
    one that asks: by default its neighbours and sessions count. One speaker's log, or
    facts, get neither; ``NO_DIALOGUE`` turns them off, ``CONVERSATION`` on for all."""
    dialogue = [
        _c("asks", 0.9, "S1", 4, "Ann"),
        _c("far", 0.5, "S2", 9, "Ann"),
        _c("answer", 0.45, "S1", 5, "Bob"),
    ]
    plain = ContextBoost(lexical=False, speaker=0)
    assert _ids(rerank("q", dialogue, plain)) == ["asks", "answer", "far"]
    assert _ids(rerank("q", dialogue, NO_DIALOGUE)) == ["asks", "far", "answer"]
    one_speaker = [c._replace(speaker="Ann") for c in dialogue]
    assert _ids(rerank("q", one_speaker, plain)) == ["asks", "far", "answer"]
    facts = [c._replace(speaker="", session="", position=-1) for c in dialogue]
    assert _ids(rerank("q", facts, plain)) == ["asks", "far", "answer"]
    assert _ids(rerank("q", one_speaker, replace(CONVERSATION, lexical=False))) == [
        "asks",
        "answer",
        "far",
    ]
    assert plain.weighed(["Ann", "Bob"]) == (0.3, 0.5)
    assert plain.weighed(["Ann", "", "Ann"]) == (0.0, 0.0)


def test_facts_without_a_session_are_not_lifted_by_each_other_in_a_dialogue() -> None:
    """The session step lifts a turn by the best of its session; memories stored without
    one are not all one session, so a relevant fact does not lift every other fact."""
    turns = [_c("asks", 0.9, "S1", 4, "Ann"), _c("reply", 0.5, "S1", 5, "Bob")]
    fact = Candidate("fact", 0.4, "", -1, "")
    plain = ContextBoost(lexical=False, speaker=0)
    alone = dict(rerank("q", [*turns, fact], plain))
    beside = dict(rerank("q", [*turns, fact, Candidate("best", 0.95, "", -1, "")], plain))
    assert alone["fact"] == beside["fact"] == pytest.approx(0.4)
    assert beside["best"] == pytest.approx(0.95)


def test_a_long_winded_speaker_gets_the_dialogue_steps_by_how_short_they_run() -> None:
    """In a chat log of a user and an assistant, the assistant's replies run many times
    a user's message: the reply beside a matching message is not lifted over the next
    relevant message for its context. Speakers who say about as much as each other keep
    the whole lift."""
    reply = "Here is a long answer with many steps and details. " * 12
    chat = [
        Candidate("asks", 0.9, "S1", 4, "user", "how do I clean my bike chain"),
        Candidate("reply", 0.45, "S1", 5, "assistant", reply),
        Candidate("other", 0.5, "S2", 0, "user", "I oiled the chain last week"),
        Candidate("more", 0.2, "S3", 0, "user", "my bike is a blue road bike"),
    ]
    plain = ContextBoost(lexical=False, speaker=0)
    assert _ids(rerank("q", chat, plain)) == ["asks", "other", "reply", "more"]
    people = [c._replace(speaker="Bob", text="about as many words") for c in chat]
    people[0] = people[0]._replace(speaker="Ann")
    assert _ids(rerank("q", people, plain))[:2] == ["asks", "reply"]
    # Without the length rule the reply would win the second place: the lift is what moves.
    short = [c._replace(text="short") if c.id == "reply" else c for c in chat]
    assert _ids(rerank("q", short, plain))[:2] == ["asks", "reply"]
