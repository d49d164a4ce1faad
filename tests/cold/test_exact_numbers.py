"""Numbers every backend stores and compares exactly: integers within ±2**53 (what a
float holds exactly, and so what Qdrant's filters compare), finite floats; anything else
is an ``InvalidInputError`` on every backend, never a bare ``OverflowError`` or a filter
that one engine answers differently."""

from __future__ import annotations

from typing import Any

import pytest

from engram import Principal
from engram.errors import InvalidInputError
from engram.stores.cold import LongTermStore

ME = Principal("t", "me")
LARGEST = 2**53

STORED = {"a": LARGEST, "b": -LARGEST, "c": LARGEST - 1, "d": 1.5, "e": 1e300, "f": 0}


@pytest.mark.parametrize(
    "number", [LARGEST + 1, -LARGEST - 1, 2**63, 2**64, 10**30, 10**400, -(10**400)]
)
def test_an_integer_past_2_53_is_refused_in_a_value(store: LongTermStore, number: int) -> None:
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.put(("t", "me"), "k", {"text": "a row", "n": number})
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.put(("t", "me"), "k", {"text": "a row", "deep": [{"n": number}]})
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.remember(ME, "Has a lucky number", value={"n": number})
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.put_many([(("t", "me"), "k", {"text": "a row", "n": number})])
    assert store.search(("t",)) == []


@pytest.mark.parametrize(
    "filter_",
    [
        {"n": LARGEST + 1},
        {"n": {"$gt": -(2**63)}},
        {"n": {"$gte": 10**30}},
        {"n": {"$in": [1, 2**64]}},
        {"n": {"$ne": 10**400}},
    ],
)
def test_an_integer_past_2_53_is_refused_in_a_filter(
    store: LongTermStore, filter_: dict[str, Any]
) -> None:
    store.put(("t", "me"), "a", {"text": "a row", "n": LARGEST})
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.search(("t",), filter=filter_)
    with pytest.raises(InvalidInputError, match="2\\*\\*53"):
        store.recall(ME, "row", filter=filter_)


@pytest.mark.parametrize(
    ("filter_", "keys"),
    [
        ({"n": LARGEST}, "a"),
        ({"n": float(LARGEST)}, "a"),
        ({"n": -LARGEST}, "b"),
        ({"n": {"$gt": LARGEST - 1}}, "ae"),
        ({"n": {"$gte": LARGEST - 1}}, "ace"),
        ({"n": {"$lt": -LARGEST + 1}}, "b"),
        ({"n": {"$in": [LARGEST, 0]}}, "af"),
        ({"n": {"$ne": LARGEST - 1}}, "abdef"),
        ({"n": {"$gt": 1e299}}, "e"),
    ],
)
def test_the_largest_integers_compare_alike_on_every_backend(
    store: LongTermStore, filter_: dict[str, Any], keys: str
) -> None:
    for key, number in STORED.items():
        store.put(("t", "me"), key, {"text": f"row {key}", "n": number})
    found = store.search(("t",), filter=filter_, limit=50)
    assert "".join(sorted(item.key for item in found)) == keys


@pytest.mark.parametrize("huge", [10**400, -(10**400), 2**1024])
def test_a_huge_integer_argument_is_an_invalid_input(store: LongTermStore, huge: int) -> None:
    with pytest.raises(InvalidInputError):
        store.remember(ME, "Has a lucky number", importance=huge)
    with pytest.raises(InvalidInputError):
        store.put(("t", "me"), "k", {"text": "a row"}, ttl=huge)
    with pytest.raises(InvalidInputError):
        store.recall(ME, "lucky", min_score=huge)
    assert store.search(("t",)) == []
