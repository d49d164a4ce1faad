"""The filter contract, identical on every backend (and in the pure evaluator)."""

from __future__ import annotations

from typing import Any

import pytest

from engram.errors import InvalidInputError
from engram.recall.filters import matches, parse_filter
from engram.stores.cold import LongTermStore

DATA: dict[str, dict[str, Any]] = {
    "int1": {"n": 1, "s": "b", "flag": True, "meta": {"kind": "x", "rank": 2}},
    "float15": {"n": 1.5, "s": "a", "flag": False, "meta": {"kind": "y"}},
    "str1": {"n": "1", "s": "c", "meta": "flat"},
    "null": {"n": None, "s": "B"},
    "list": {"n": [1], "s": ["b"]},
    "empty": {},
}

CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"n": 1}, {"int1"}),
    ({"n": {"$eq": 1.0}}, {"int1"}),
    ({"n": "1"}, {"str1"}),
    ({"n": None}, {"null"}),
    ({"n": {"$ne": 1}}, {"float15", "str1", "null", "list"}),
    ({"n": {"$gt": 1}}, {"float15"}),
    ({"n": {"$gte": 1}}, {"int1", "float15"}),
    ({"n": {"$lt": 1.5}}, {"int1"}),
    ({"n": {"$lte": 1.5, "$gt": 1}}, {"float15"}),
    ({"s": {"$gt": "a"}}, {"int1", "str1"}),
    ({"s": {"$lt": "a"}}, {"null"}),
    ({"s": {"$in": ["a", "c"]}}, {"float15", "str1"}),
    ({"n": {"$in": [1, "1"]}}, {"int1", "str1"}),
    ({"flag": True}, {"int1"}),
    ({"flag": False}, {"float15"}),
    ({"flag": {"$ne": True}}, {"float15"}),
    ({"meta.kind": "x"}, {"int1"}),
    ({"meta.rank": {"$gte": 2}}, {"int1"}),
    ({"meta.kind": {"$ne": "x"}}, {"float15"}),
    ({"missing": {"$ne": 1}}, set()),
    ({"n": 1, "s": "b"}, {"int1"}),
    ({"n": 1, "s": "a"}, set()),
]


@pytest.mark.parametrize(("filter_", "expected"), CASES, ids=[str(c[0]) for c in CASES])
def test_pure_evaluator(filter_: dict[str, Any], expected: set[str]) -> None:
    conditions = parse_filter(filter_)
    assert {k for k, v in DATA.items() if matches(conditions, v)} == expected


def test_every_backend_agrees(store: LongTermStore) -> None:
    for key, value in DATA.items():
        store.put(("f", "x"), key, value)
    for filter_, expected in CASES:
        got = {it.key for it in store.search(("f",), filter=filter_, limit=100)}
        assert got == expected, filter_


def test_filters_apply_to_ranked_search(store: LongTermStore) -> None:
    for i in range(30):
        store.put(("f", "x"), f"k{i}", {"text": f"note about apples {i}", "i": i})
    found = store.search(("f",), query="apples", filter={"i": {"$in": [3, 27]}}, limit=10)
    assert {f.key for f in found} == {"k3", "k27"}


@pytest.mark.parametrize(
    "bad",
    [
        {"n": {"$regex": "x"}},
        {"n": {"$gt": True}},
        {"n": {"$gt": None}},
        {"n": {"$in": []}},
        {"n": {"$in": "abc"}},
        {"n": [1, 2]},
        {"n": {}},
        {"": 1},
        {"a..b": 1},
    ],
)
def test_bad_filters_raise(store: LongTermStore, bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        store.search(("f",), filter=bad)


def test_an_integer_past_64_bits_is_refused_not_a_bare_overflow(store: LongTermStore) -> None:
    """SQLite binds integers of 64 bits (a larger operand raised a bare OverflowError), and
    Qdrant compares numbers as floats: an integer past 2**53 is refused in a filter as in
    a value (``test_exact_numbers``), while a float that large compares as it is."""
    store.put(("f", "x"), "big", {"n": 1e20})
    store.put(("f", "x"), "small", {"n": 7})
    assert {it.key for it in store.search(("f",), filter={"n": {"$gt": 1e19}})} == {"big"}
    assert {it.key for it in store.search(("f",), filter={"n": {"$lt": 1e19}})} == {"small"}
    with pytest.raises(InvalidInputError):
        store.search(("f",), filter={"n": {"$gt": 10**19}})


@pytest.mark.parametrize("value", [{"s": "a\x00b"}, {"a\x00": 1}, {"l": ["ok", "\ud800"]}])
def test_a_value_no_backend_can_match_is_refused_alike(
    store: LongTermStore, value: dict[str, Any]
) -> None:
    """A NUL or a lone surrogate in a stored value: PostgreSQL cannot store it and SQLite
    stored it where no filter matched it; every backend now refuses it, with the same
    typed error, before anything is written."""
    with pytest.raises(InvalidInputError):
        store.put(("f", "x"), "k", value)
    with pytest.raises(InvalidInputError):
        store.remember(("f", "x"), "a fact", value=value)
    assert store.search(("f",), limit=10) == []
