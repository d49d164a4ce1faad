"""Queries and values of a megabyte: recall and reads return (a pipelined PostgreSQL read
once waited forever on a parameter of 1 MB) and find what the query's ordinary words name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from engram import Principal
from engram.stores.cold import LongTermStore

ME = Principal("t", "me")
T = TypeVar("T")
PATIENCE = 60.0
"""Seconds a call may take before it counts as hung (each returns in well under one)."""


def returns(call: Callable[[], T]) -> T:
    """``call()``'s result, failing the test if it has not returned within PATIENCE."""
    outcome: dict[str, T | BaseException] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - raised again in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(PATIENCE)
    assert not thread.is_alive(), f"no answer within {PATIENCE:.0f} s"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _texts(store: LongTermStore, query: str, **kwargs: object) -> list[str]:
    found = returns(lambda: store.recall(ME, query, context=None, **kwargs))  # type: ignore[arg-type]
    return [r.record.text for r in found]


def test_a_word_of_megabytes(store: LongTermStore) -> None:
    store.remember(ME, "I prefer tea over coffee", tags=["preference"])
    returns(lambda: store.recall(ME, "tea" + "a" * 3_000_000))
    assert "I prefer tea over coffee" in _texts(store, "tea " + "a" * 3_000_000)
    assert "I prefer tea over coffee" in _texts(store, "b" * 3_000 + " coffee")


def test_many_distinct_words_still_find_the_first_ones(store: LongTermStore) -> None:
    store.remember(ME, "I prefer tea over coffee", tags=["preference"])
    filler = " ".join(f"w{n}x" for n in range(60_000))
    assert "I prefer tea over coffee" in _texts(store, "what about tea? " + filler)


def test_a_filter_value_of_a_megabyte(store: LongTermStore) -> None:
    store.remember(ME, "I prefer tea over coffee", tags=["preference"], value={"mood": "calm"})
    assert _texts(store, "tea", filter={"mood": "x" * 2_000_000}) == []
    assert _texts(store, "tea", filter={"mood": "calm"}) == ["I prefer tea over coffee"]


def test_a_stored_value_of_a_megabyte_looked_up_by_itself(store: LongTermStore) -> None:
    ns, big = ("docs", "a"), "kettle " + "steam" * 400_000
    store.put(ns, "big", {"text": "a long one", "body": big})
    store.put(ns, "small", {"text": "a short one", "body": "kettle"})
    found = returns(lambda: store.search(("docs",), filter={"body": big}))
    assert [item.key for item in found] == ["big"]
    item = returns(lambda: store.get(ns, "big"))
    assert item is not None and item.value["body"] == big
