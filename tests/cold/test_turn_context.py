"""Contextual vectors for conversation turns (``turn_context``), on every backend: a
short turn is embedded with the turns before it in its session, so a question about
what it answers finds it; its stored text stays its own, and nothing else changes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from engram import InvalidInputError, Principal
from engram.recall import MiniLMEmbedder
from engram.stores.cold import LongTermStore, NewFact

if TYPE_CHECKING:
    from conftest import StoreFactory

ME = Principal("t", "me")
OTHER = Principal("t", "other")

SESSIONS = {
    "s1": [
        "John: Did you bring the puppy home from the animal shelter yet?",
        "Maria: Yes, last Tuesday!",
    ],
    "s2": [
        "John: Have you signed up for the pottery workshop downtown?",
        "Maria: Yes, on Friday!",
    ],
    "s3": [
        "John: Did your sister finally move into the new flat in Leeds?",
        "Maria: Yes, a week ago!",
    ],
}
"""Three sessions, each a question and a short answer that names nothing of its topic."""

PARAPHRASES = {
    "When did Maria get her new dog?": "Maria: Yes, last Tuesday!",
    "When did Maria adopt a pet?": "Maria: Yes, last Tuesday!",
    "When did Maria's sister relocate?": "Maria: Yes, a week ago!",
    "When is Maria's ceramics class?": "Maria: Yes, on Friday!",
}
"""Questions sharing no content word with their answer turn nor with its session."""


def _turns() -> list[NewFact]:
    return [NewFact(t, value={"session": s}) for s, texts in SESSIONS.items() for t in texts]


def _first_answer(store: LongTermStore, question: str) -> str:
    """The best-ranked of the three short answers for ``question``."""
    answers = {texts[-1] for texts in SESSIONS.values()}
    return next(h.record.text for h in store.recall(ME, question, k=6) if h.record.text in answers)


def test_a_short_turn_is_found_by_a_paraphrase_of_its_topic(
    make_store: StoreFactory, minilm: MiniLMEmbedder
) -> None:
    store = make_store(embedder=minilm)
    store.remember_many(ME, _turns(), turn_context=2)
    assert {q: _first_answer(store, q) for q in PARAPHRASES} == PARAPHRASES


def test_without_context_the_short_answers_are_told_apart_by_their_own_words_only(
    make_store: StoreFactory, minilm: MiniLMEmbedder
) -> None:
    """The scenario above needs the context: on their own the answers rank by how much
    "Yes, ..." resembles the question, and most questions get a wrong one."""
    store = make_store(embedder=minilm)
    store.remember_many(ME, _turns())
    wrong = [q for q, answer in PARAPHRASES.items() if _first_answer(store, q) != answer]
    assert len(wrong) >= 2


def test_put_many_embeds_turns_with_their_context_too(make_store: StoreFactory) -> None:
    """With the word-hashing embedder: a word only the turn before says reaches the turn's
    vector, and only in its own session."""
    store = make_store()
    items = [
        (ME.namespace, "a1", {"text": "we planted tomatoes in the allotment", "session": "a"}),
        (ME.namespace, "a2", {"text": "yes they are ripe now", "session": "a"}),
        (ME.namespace, "b1", {"text": "yes they are ripe now", "session": "b"}),
    ]
    store.put_many(items, turn_context=1)
    found = {h.record.key: h.similarity for h in store.recall(ME, "allotment tomatoes", k=3)}
    assert found["a2"] is not None and found["b1"] is not None
    assert found["a2"] > found["b1"] + 0.2
    assert store.recall(ME, "ripe", k=3)[0].record.text == "yes they are ripe now"


def test_a_session_of_another_namespace_is_no_context(make_store: StoreFactory) -> None:
    """One bulk load of two users' logs: the same session name does not join them."""
    store = make_store()
    items = [
        (OTHER.namespace, "o1", {"text": "my bank pin is nine nine", "session": "s1"}),
        (ME.namespace, "m1", {"text": "yes they are ripe now", "session": "s1"}),
    ]
    store.put_many(items, turn_context=2)
    assert store.recall(ME, "bank pin nine", k=3) == []
    assert [h.record.key for h in store.recall(OTHER, "bank pin nine", k=3)] == ["o1"]


def test_facts_without_a_session_are_embedded_from_their_own_text(
    make_store: StoreFactory,
) -> None:
    store = make_store()
    facts = [NewFact("we planted tomatoes in the allotment"), NewFact("yes they are ripe now")]
    store.remember_many(ME, facts, turn_context=2)
    store.remember_many(OTHER, facts)
    query = "ripe tomatoes"
    with_window = {h.record.text: h.similarity for h in store.recall(ME, query, k=2)}
    alone = {h.record.text: h.similarity for h in store.recall(OTHER, query, k=2)}
    assert with_window == pytest.approx(alone)
    assert len(alone) == 2


def test_the_context_is_never_stored(make_store: StoreFactory) -> None:
    """Each record holds its own text and value only; erasure leaves nothing."""
    store = make_store()
    store.remember_many(ME, _turns(), turn_context=2)
    records = store.records(ME, limit=50)
    texts = [t for texts in SESSIONS.values() for t in texts]
    assert sorted(r.text for r in records) == sorted(texts)
    for record in records:
        others = [t for t in texts if t != record.text]
        assert not any(t in str(record.value) for t in others)
    store.forget(ME)
    assert store.records(ME, limit=50) == []
    assert store.recall(ME, "When did Maria get her new dog?") == []


@pytest.mark.parametrize("bad", [-1, 17, True, 1.5])
def test_a_bad_window_is_refused_before_anything_is_written(
    make_store: StoreFactory, bad: object
) -> None:
    store = make_store()
    with pytest.raises(InvalidInputError, match="turn_context"):
        store.remember_many(ME, _turns(), turn_context=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="turn_context"):
        store.put_many([(ME.namespace, "k", {"text": "hello"})], turn_context=bad)  # type: ignore[arg-type]
    assert store.records(ME, limit=5) == []


class _Redacting:
    """A stand-in write policy: refuses high sensitivity, redacts one address."""

    def evaluate(self, candidate: Any) -> Any:
        text = candidate.text.replace("alice@example.com", "[EMAIL]")
        refused = candidate.sensitivity == "high"
        changed = ("email",) if text != candidate.text else ()
        return SimpleNamespace(
            allowed=not refused,
            held_for_review=False,
            reason="sensitivity high" if refused else None,
            text=text,
            redactions=changed,
        )


def test_the_context_is_what_the_policy_let_through(make_store: StoreFactory) -> None:
    """A redacted address and a refused turn reach no other turn's vector."""
    store = make_store(policy=_Redacting())
    turns = [
        NewFact("write to alice@example.com about the zebras", value={"session": "s"}),
        NewFact("my quokka password is hunter", sensitivity="high", value={"session": "s"}),
        NewFact("sure, will do", value={"session": "s"}),
    ]
    actions = [r.action for r in store.remember_many(ME, turns, turn_context=2)]
    assert actions == ["added", "rejected", "added"]
    found = {h.record.text: h.similarity for h in store.recall(ME, "zebras", k=3)}
    assert (found.get("sure, will do") or 0.0) > 0.2  # the kept turn is its context
    assert store.recall(ME, "alice example quokka hunter", k=3) == []


LONG = "we finally repainted the garden shed a deep green colour over the long weekend"
"""A self-contained turn: more words than the short reply before it."""


def _similarities(store: LongTermStore, who: Principal, query: str) -> dict[str, float]:
    return {h.record.text: h.similarity or 0.0 for h in store.recall(who, query, k=5)}


@pytest.mark.parametrize("entry", ["put_many", "remember_many"])
def test_shorter_gives_the_context_only_to_a_turn_shorter_than_its_context(
    make_store: StoreFactory, entry: str
) -> None:
    """The reply shorter than the turn it follows carries it; the long turn after the
    short reply is embedded from its own words alone, as without any context."""
    store = make_store()
    texts = ["ok sounds good", LONG, "yes it looks lovely now"]
    if entry == "put_many":
        items = [(ME.namespace, f"k{i}", {"text": t, "session": "s"}) for i, t in enumerate(texts)]
        store.put_many(items, turn_context=1, turn_context_rule="shorter")
    else:
        facts = [NewFact(t, value={"session": "s"}) for t in texts]
        store.remember_many(ME, facts, turn_context=1, turn_context_rule="shorter")
    store.remember_many(OTHER, [NewFact(LONG)])
    query = "sounds good garden shed"
    ruled = _similarities(store, ME, query)
    assert ruled[LONG] == pytest.approx(_similarities(store, OTHER, query)[LONG])
    assert _similarities(store, ME, "garden shed green")["yes it looks lovely now"] > 0.2


def test_an_unknown_rule_is_refused_before_anything_is_written(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(InvalidInputError, match="turn_context_rule"):
        store.remember_many(ME, _turns(), turn_context=2, turn_context_rule="often")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="turn_context_rule"):
        store.put_many([(ME.namespace, "k", {"text": "hi"})], turn_context_rule="often")  # type: ignore[arg-type]
    assert store.records(ME, limit=5) == []
