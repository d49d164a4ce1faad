"""Strange inputs get one answer on every backend: a moment at the edge of ``datetime``, a
``NaN`` or a ``bytes`` in a value, a lone surrogate or an infinity as a filter operand, a
quote in a filter field, a naive ``datetime`` in a ``View``. Either every backend takes it
and reads it back alike, or every backend refuses it with ``InvalidInputError`` before
writing anything, and the user's reads keep working."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from engram import InvalidInputError, Principal
from engram.stores.cold import LongTermStore, NewFact, View

if TYPE_CHECKING:  # the clock fixture's type
    from cold_support import Clock

ALICE, BOB = Principal("acme", "alice"), Principal("acme", "bob")
SINCE = datetime(2020, 1, 1, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
"""The last moment engram stores (the common "end of time" of other systems too)."""
PAST_LAST = [
    datetime.max.replace(tzinfo=UTC),
    LAST + timedelta(microseconds=1),
    datetime.max,  # naive: read as UTC
    datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-12))),  # past it in UTC
]


def _seed(store: LongTermStore) -> None:
    store.remember(ALICE, "Plays chess on Sundays", key="chess", value={"stars": 5})
    store.remember(BOB, "Bob plays go", key="go", value={"stars": 4})


def _reads_work(store: LongTermStore) -> None:
    """Every read of alice's memory answers, with her one fact (nothing else was written)."""
    assert [r.key for r in store.records(ALICE)] == ["chess"]
    assert [h.record.key for h in store.recall(ALICE, "chess", filter={"stars": 5})] == ["chess"]
    assert [i.key for i in store.search(ALICE.namespace, filter={"stars": 5})] == ["chess"]
    assert len(store.history(ALICE, "chess")) == 1
    assert [h.record.key for h in store.recall(BOB, "go", filter={"stars": 4})] == ["go"]


def _refused(write: Callable[[], object]) -> None:
    with pytest.raises(InvalidInputError):
        write()


# -- moments --------------------------------------------------------------------------


@pytest.mark.parametrize("moment", PAST_LAST, ids=["max-utc", "last+1us", "max-naive", "-12h"])
def test_a_moment_past_the_last_storable_one_is_refused(
    store: LongTermStore, moment: datetime
) -> None:
    _seed(store)
    kayak: dict[str, Any] = {"key": "kayak", "tags": ["fact"]}
    _refused(
        lambda: store.remember(ALICE, "Owns a kayak", valid_from=SINCE, valid_to=moment, **kayak)
    )
    _refused(lambda: store.remember(ALICE, "Owns a kayak", expires_at=moment, **kayak))
    _refused(lambda: store.remember(ALICE, "Owns a kayak", valid_from=moment, **kayak))
    fact = NewFact("Owns a kayak", key="kayak", valid_from=SINCE, valid_to=moment)
    _refused(lambda: store.remember_many(ALICE, [fact]))
    _refused(lambda: store.recall(ALICE, "chess", as_of=moment))
    _reads_work(store)


def test_a_ttl_too_long_to_end_before_the_last_moment_is_refused(store: LongTermStore) -> None:
    _seed(store)
    for ttl in (timedelta(days=3_000_000), timedelta.max):
        _refused(lambda: store.remember(ALICE, "Owns a kayak", key="kayak", ttl=ttl))  # noqa: B023
    _reads_work(store)


def test_the_edges_of_the_storable_moments_read_back_exactly(store: LongTermStore) -> None:
    first = datetime.min.replace(tzinfo=UTC)
    closed = store.remember(ALICE, "Owned a canoe", key="canoe", valid_from=first, valid_to=LAST)
    expiring = store.remember(ALICE, "Owns a kayak", key="kayak", expires_at=LAST)
    assert closed.action == expiring.action == "added"
    got = {r.key: r for r in store.records(ALICE)}
    assert (got["canoe"].valid_from, got["canoe"].valid_to) == (first, LAST)
    assert got["kayak"].expires_at == LAST
    assert [r.valid_to for r in store.history(ALICE, "canoe")] == [LAST]
    assert {h.record.key for h in store.recall(ALICE, "canoe kayak")} == {"canoe", "kayak"}


@pytest.mark.parametrize("naive", ["now", "as_of"])
def test_a_naive_datetime_in_a_view_is_read_as_utc(
    store: LongTermStore, clock: Clock, naive: str
) -> None:
    store.remember(ALICE, "Plays chess on Sundays", key="chess")
    later = clock.now + timedelta(hours=1)
    aware = View(later, as_of=later) if naive == "as_of" else View(later)
    plain = later.replace(tzinfo=None)
    view = View(later, as_of=plain) if naive == "as_of" else View(plain)
    assert [r.key for r in store.records(ALICE, view)] == ["chess"]
    assert view == aware
    before = plain - timedelta(hours=2)  # before the fact was recorded: nothing then
    early = View(later, as_of=before) if naive == "as_of" else View(before)
    assert store.records(ALICE, early) == []


# -- values ---------------------------------------------------------------------------

NOT_STORABLE = {
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "nan-in-list": [1, float("nan")],
    "inf-nested": {"deep": {"x": float("inf")}},
    "bytes": b"ab",
    "set": {1, 2},
    "frozenset": frozenset({"a"}),
    "object": object(),
    "datetime": datetime(2026, 1, 1, tzinfo=UTC),
    "complex": 1j,
    "int-key": {1: "one"},
    "none-key": {None: "none"},
    "mapping-inside": MappingProxyType({"a": 1}),
    "bytes-in-list": ["a", b"b"],
}


@pytest.mark.parametrize("bad", NOT_STORABLE.values(), ids=NOT_STORABLE.keys())
def test_a_value_that_is_not_json_is_refused(store: LongTermStore, bad: object) -> None:
    _seed(store)
    _refused(lambda: store.remember(ALICE, "Owns a kayak", key="kayak", value={"x": bad}))
    _refused(lambda: store.put(ALICE.namespace, "kayak", {"text": "Owns a kayak", "x": bad}))
    fact = NewFact("Owns a kayak", key="kayak", value={"x": bad})
    _refused(lambda: store.remember_many(ALICE, [fact]))
    _reads_work(store)


def test_json_values_read_back_alike(store: LongTermStore) -> None:
    value = {
        "xs": (1, 2.5, "three", True, None),  # a tuple is a JSON array: read as a list
        "big": -(2**53),  # (the largest integer stored: test_exact_numbers)
        "deep": {"s": "é ✓", "n": [1, {"m": False}]},
    }
    store.remember(ALICE, "Owns a kayak", key="kayak", value=value)
    got = store.records(ALICE)[0].value
    assert got["xs"] == [1, 2.5, "three", True, None] and isinstance(got["xs"], list)
    assert got["big"] == -(2**53) and got["deep"] == value["deep"]


def test_a_value_changed_after_the_write_leaves_the_stored_one_alone(
    store: LongTermStore,
) -> None:
    value: dict[str, Any] = {"items": ["paddle"]}
    store.remember(ALICE, "Owns a kayak", key="kayak", value=value)
    value["items"].append("helmet")
    assert store.records(ALICE)[0].value["items"] == ["paddle"]


# -- filters --------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
BAD_OPERANDS = {
    "surrogate": {"name": "\ud800"},
    "surrogate-gt": {"name": {"$gt": "\udc00"}},
    "surrogate-in": {"name": {"$in": ["x", "\ud800"]}},
    "nan": {"stars": NAN},
    "nan-lt": {"stars": {"$lt": NAN}},
    "nan-gt": {"stars": {"$gt": NAN}},
    "nan-ne": {"stars": {"$ne": NAN}},
    "inf-lt": {"stars": {"$lt": INF}},
    "-inf-gt": {"stars": {"$gt": -INF}},
    "inf-in": {"stars": {"$in": [5, INF]}},
    "past-float": {"stars": {"$lt": 10**400}},
}
BAD_FIELDS = {
    "quote": {'say "hi"': 1},
    "backslash": {"a\\b": 1},
    "control": {"a\x01b": 1},
    "newline": {"meta.a\nb": 1},
    "surrogate": {"\ud800": 1},
}


@pytest.mark.parametrize(
    "filter_",
    [*BAD_OPERANDS.values(), *BAD_FIELDS.values()],
    ids=[*(f"operand-{k}" for k in BAD_OPERANDS), *(f"field-{k}" for k in BAD_FIELDS)],
)
def test_a_filter_no_backend_can_answer_alike_is_refused(
    store: LongTermStore, filter_: dict[str, Any]
) -> None:
    _seed(store)
    store.put(ALICE.namespace, "odd", {"text": "Likes jazz", 'say "hi"': 1, "a\\b": 1})
    _refused(lambda: store.recall(ALICE, "chess", filter=filter_))
    _refused(lambda: store.search(ALICE.namespace, filter=filter_))
    assert [i.key for i in store.search(ALICE.namespace, filter={"stars": 5})] == ["chess"]


def test_filters_at_the_edges_still_answer(store: LongTermStore) -> None:
    """What stays allowed: huge finite numbers, any other character in a field name."""
    store.put(ALICE.namespace, "odd", {"text": "Likes jazz", "a b[0]/é ✓": 1, "n": 1e300})
    found = store.search(ALICE.namespace, filter={"a b[0]/é ✓": 1, "n": {"$gt": -1.7e308}})
    assert [i.key for i in found] == ["odd"]
    assert store.search(ALICE.namespace, filter={"n": {"$gt": 1.7e308}}) == []


@pytest.mark.parametrize("bad", [b"ab", {1, 2}], ids=["bytes", "set"])  # (NaN: PostgreSQL does)
def test_put_many_refuses_a_value_that_is_not_json(store: LongTermStore, bad: object) -> None:
    _seed(store)
    _refused(
        lambda: store.put_many([(ALICE.namespace, "kayak", {"text": "Owns a kayak", "x": bad})])
    )
    _reads_work(store)


@pytest.mark.parametrize("minutes", [1e30, float("nan"), -5.0, 0.0])
def test_a_put_ttl_no_timedelta_holds_is_invalid_input(
    store: LongTermStore, minutes: float
) -> None:
    """LangGraph's ``put(ttl=minutes)`` built ``timedelta(minutes=...)`` unchecked: a bare
    OverflowError (or ValueError) for a huge or NaN ttl."""
    with pytest.raises(InvalidInputError, match="ttl"):
        store.put(ALICE.namespace, "k", {"text": "Owns a kayak"}, ttl=minutes)
    assert store.get(ALICE.namespace, "k") is None
