"""Recall keeps its candidates' excerpts in process: a repeated recall reads only what
it does not hold, never serves an old version's text for a new one, never another
user's, and keeps nothing an erasure or a sweep removed. On every backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from cold_support import Clock

from engram import Principal
from engram.stores.cold import LongTermStore, Options
from engram.stores.cold._excerpts import ExcerptCache
from engram.stores.cold.contract import Excerpt

if TYPE_CHECKING:
    from conftest import StoreFactory

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
SECRET = "My locker code at the Quarry Street gym is 7319 zephyrine"


def _cached_texts(store: LongTermStore) -> set[str]:
    return {e.text for e in store._excerpts._kept.values()}


def _counting_reads(store: LongTermStore) -> list[list[str]]:
    """The ids of each excerpt read that reaches the backend, from now on."""
    reads: list[list[str]] = []
    read = store.backend.excerpts

    def counted(ids: Sequence[str]) -> Mapping[str, Excerpt]:
        reads.append(list(ids))
        return read(ids)

    store.backend.excerpts = counted  # type: ignore[method-assign]
    return reads


def test_a_repeated_recall_reads_only_the_excerpts_it_does_not_hold(
    store: LongTermStore,
) -> None:
    for n in range(30):
        store.remember(ALICE, f"Trip number {n} went to the lake by the old mill", key=f"k{n}")
    reads = _counting_reads(store)
    first = [r.record.id for r in store.recall(ALICE, "Which trip went to the lake?", k=5)]
    assert len(reads) == 1 and len(reads[0]) >= 5
    again = store.recall(ALICE, "Which trip went to the lake?", k=5)
    assert [r.record.id for r in again] == first
    assert len(reads) == 1  # every excerpt held

    added = store.remember(ALICE, "Trip number 99 went to the lake at dawn", key="k99")
    assert added.record is not None
    store.recall(ALICE, "Which trip went to the lake?", k=5)
    assert reads[1:] == [[added.record.id]]


def test_a_new_version_is_recalled_with_its_own_text(store: LongTermStore) -> None:
    store.remember(ALICE, "My gym locker code is 4471", key="locker")
    assert [r.record.text for r in store.recall(ALICE, "gym locker code")] == [
        "My gym locker code is 4471"
    ]
    store.update(ALICE, "locker", "My gym locker code is 9052")
    found = store.recall(ALICE, "gym locker code")
    assert [r.record.text for r in found] == ["My gym locker code is 9052"]


def test_another_users_cached_excerpt_is_never_recalled(store: LongTermStore) -> None:
    store.remember(ALICE, SECRET)
    store.remember(BOB, "My locker at the Quarry Street gym is number 12")
    assert store.recall(ALICE, "locker code at the Quarry Street gym")
    assert SECRET in _cached_texts(store)
    found = store.recall(BOB, "locker code at the Quarry Street gym")
    assert [r.record.text for r in found] == ["My locker at the Quarry Street gym is number 12"]


def test_an_erasure_report_says_nothing_of_other_users_reads(store: LongTermStore) -> None:
    """The caches are the process's: how full they were when one user's erasure emptied
    them tells of everyone else's recalls. The report is the same whoever read what, and an
    erasure that removed nothing empties nobody's caches."""
    carol = Principal("beta", "carol")

    def erase_one_fact_of_carol() -> int:
        store.remember(carol, "Carol keeps her bike in the shed", key="bike")
        return store.forget(carol, ["bike"]).caches_cleared

    quiet = erase_one_fact_of_carol()
    store.remember(ALICE, SECRET)
    assert store.recall(ALICE, "locker code at the gym")
    busy = erase_one_fact_of_carol()
    assert quiet == busy > 0
    assert store.recall(ALICE, "locker code at the gym")
    assert store.forget(carol, ["no-such-key"]).caches_cleared == 0
    assert SECRET in _cached_texts(store)  # Alice's reads kept their cache


def test_forget_empties_the_cache(store: LongTermStore) -> None:
    store.remember(ALICE, SECRET)
    store.remember(BOB, "Bob takes the early train to the harbour office")
    assert store.recall(ALICE, "locker code at the gym")
    assert store.recall(BOB, "train to the office")
    assert SECRET in _cached_texts(store)
    report = store.forget(ALICE)
    assert report.caches_cleared >= 1
    assert _cached_texts(store) == set()
    assert store.recall(ALICE, "locker code at the gym") == []


def test_a_sweep_that_removes_expired_facts_empties_the_cache(
    make_store: StoreFactory, clock: Clock
) -> None:
    store = make_store()
    store.remember(ALICE, SECRET, ttl=timedelta(hours=1))
    assert store.recall(ALICE, "locker code at the gym")
    assert SECRET in _cached_texts(store)
    clock.advance(hours=2)
    assert store.sweep() == 1
    assert _cached_texts(store) == set()


def test_no_cache_reads_every_excerpt(make_store: StoreFactory) -> None:
    store = make_store(options=Options(excerpt_cache=0))
    store.remember(ALICE, SECRET)
    reads = _counting_reads(store)
    for _ in range(2):
        assert store.recall(ALICE, "locker code at the gym")
    assert len(reads) == 2 and _cached_texts(store) == set()


def _excerpt(row_id: str) -> Excerpt:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return Excerpt(row_id, f"text of {row_id}", {}, moment, moment, 0.5)


def _load(ids: Sequence[str]) -> dict[str, Excerpt]:
    return {i: _excerpt(i) for i in ids if not i.startswith("gone")}


def test_the_cache_holds_at_most_its_capacity_the_first_kept_leaving_first() -> None:
    cache = ExcerptCache(3)
    assert list(cache.read(["a", "b"], _load)) == ["a", "b"]
    assert sorted(cache.read(["c", "d", "a"], _load)) == ["a", "c", "d"]  # "a" held
    assert len(cache) == 3 and sorted(cache._kept) == ["b", "c", "d"]


def test_long_texts_are_kept_within_the_character_budget() -> None:
    cache = ExcerptCache(100, max_chars=25, max_text=12)

    def load(ids: Sequence[str]) -> dict[str, Excerpt]:
        return {i: _excerpt(i)._replace(text="x" * 10) for i in ids}

    cache.read(["a", "b"], load)
    assert sorted(cache._kept) == ["a", "b"]
    cache.read(["c"], load)  # 30 characters: the first kept leaves
    assert sorted(cache._kept) == ["b", "c"]
    huge = cache.read(["huge"], lambda ids: {"huge": _excerpt("huge")._replace(text="y" * 13)})
    assert list(huge) == ["huge"]  # returned, not kept, and nothing pushed out for it
    assert sorted(cache._kept) == ["b", "c"]


def test_by_default_a_text_over_a_64th_of_the_budget_is_not_kept() -> None:
    cache = ExcerptCache(10, max_chars=6400)
    assert cache.max_text == 100
    cache.read(["a"], lambda ids: {"a": _excerpt("a")._replace(text="z" * 100)})
    cache.read(["b"], lambda ids: {"b": _excerpt("b")._replace(text="z" * 101)})
    assert sorted(cache._kept) == ["a"]


def test_an_id_that_does_not_exist_is_left_out_and_read_again() -> None:
    cache = ExcerptCache(10)
    loads: list[list[str]] = []

    def load(ids: Sequence[str]) -> dict[str, Excerpt]:
        loads.append(list(ids))
        return _load(ids)

    assert list(cache.read(["a", "gone-1"], load)) == ["a"]
    assert list(cache.read(["a", "gone-1"], load)) == ["a"]
    assert loads == [["a", "gone-1"], ["gone-1"]]


def test_a_read_under_way_when_the_cache_is_emptied_is_not_kept() -> None:
    """An erasure between a read of the backend and its keeping: what the read found is
    returned to its recall, and not kept (the erasure may have removed it)."""
    cache = ExcerptCache(10)

    def load_then_erased(ids: Sequence[str]) -> dict[str, Excerpt]:
        found = _load(ids)
        cache.clear()  # another thread's forget, while this read was under way
        return found

    assert sorted(cache.read(["a", "b"], load_then_erased)) == ["a", "b"]
    assert len(cache) == 0
    assert sorted(cache.read(["a", "b"], _load)) == ["a", "b"]
    assert len(cache) == 2


@pytest.mark.parametrize("held", [True, False])
def test_clear_counts_one_cache_when_it_held_something(held: bool) -> None:
    cache = ExcerptCache(10)
    if held:
        cache.read(["a"], _load)
    assert cache.clear() == int(held)
    assert len(cache) == 0
