"""The re-ranked recall's pool: what it reads of each candidate (an ``Excerpt``) must
say what the whole record says, on every backend, and re-ranking from excerpts must
rank exactly as re-ranking from whole records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import Principal
from engram.recall import CONVERSATION, DEFAULT_CONTEXT, ContextBoost
from engram.stores.cold import ColdBackend, LongTermStore, Provenance

ALICE = Principal("acme", "alice")

TURNS = [
    ("Alice", "Alice: we went camping by the lake last weekend", "8 May 2023"),
    ("Bob", "Bob: I camped there too, the lake was cold", "8 May 2023"),
    ("Alice", "Alice: my sister painted the sunrise over the lake", "9 May 2023"),
    ("Bob", "Bob: painting is hard, I tried watercolours once", "9 May 2023"),
    ("Alice", "Alice: next month I start a pottery class", "20 June 2023"),
    ("Bob", "Bob: pottery sounds great, tell me how it goes", "20 June 2023"),
    ("Alice", "Alice: the pottery class was fun, I made a bowl", "2 July 2023"),
    ("Bob", "Bob: I adopted a dog named Pepper", "2 July 2023"),
    ("Alice", "Alice: Pepper is a lovely name for a dog", "3 July 2023"),
    ("Bob", "Bob: we hiked with Pepper up the hill", "15 August 2023"),
]

QUERIES = [
    "When did Alice go camping?",
    "What did Bob adopt in July 2023?",
    "Who painted the sunrise?",
    "pottery class bowl",
    "What did Alice's sister paint in May 2023?",
    "hiking with the dog",
]


def _remember_turns(store: LongTermStore) -> list[str]:
    ids = []
    for position, (speaker, text, day) in enumerate(TURNS):
        value = {"speaker": speaker, "session": f"s{position // 4}", "position": position}
        if position % 3:  # some turns carry a date field, the others fall back on valid_from
            value["date"] = day
        result = store.remember(
            ALICE,
            text,
            key=f"turn-{position}",
            value=value,
            tags=("chat",),
            importance=0.3 + 0.05 * position,
            valid_from=datetime(2023, 5, 1 + position, tzinfo=UTC),
            provenance=Provenance(thread_id="t1", message_ids=(f"m{position}",)),
        )
        assert result.record is not None
        ids.append(result.record.id)
    return ids


def test_excerpts_say_what_whole_records_say(store: LongTermStore) -> None:
    ids = _remember_turns(store)
    excerpts = store.backend.excerpts([*ids, "no-such-version"])
    records = {r.id: r for r in store.backend.fetch(ids)}
    assert set(excerpts) == set(ids)
    for version_id, excerpt in excerpts.items():
        record = records[version_id]
        assert excerpt.id == version_id
        assert excerpt.text == record.text
        assert dict(excerpt.value) == dict(record.value)
        assert excerpt.valid_from == record.valid_from
        assert excerpt.recorded_at == record.recorded_at
        assert excerpt.importance == record.importance
    assert store.backend.excerpts([]) == {}


def _through_whole_records(store: LongTermStore) -> None:
    """Make ``store`` read excerpts the contract's default way: from whole records."""
    backend = store.backend

    def from_records(ids: list[str]) -> object:
        return ColdBackend.excerpts(backend, ids)

    backend.excerpts = from_records  # type: ignore[method-assign]


@pytest.mark.parametrize("boost", [DEFAULT_CONTEXT, CONVERSATION, ContextBoost(pool=3)])
def test_re_ranking_from_excerpts_ranks_as_from_whole_records(
    make_store: object, boost: ContextBoost
) -> None:
    store = make_store()  # type: ignore[operator]
    _remember_turns(store)
    frozen = store.now()
    store._clock = lambda: frozen  # both recalls score recency at one moment
    fast = {q: store.recall(ALICE, q, k=4, context=boost) for q in QUERIES}
    _through_whole_records(store)
    slow = {q: store.recall(ALICE, q, k=4, context=boost) for q in QUERIES}
    assert fast == slow
    assert all(fast[q] for q in QUERIES)  # every query recalled something to compare


def test_re_ranked_recall_returns_whole_records(store: LongTermStore) -> None:
    _remember_turns(store)
    found = store.recall(ALICE, "When did Alice go camping?", k=3)
    assert len(found) == 3
    whole = {r.id: r for r in store.backend.fetch([hit.record.id for hit in found])}
    for hit in found:
        assert hit.record == whole[hit.record.id]
        assert hit.record.tags == ("chat",)
        assert hit.record.provenance.thread_id == "t1"
        assert hit.importance == hit.record.importance
