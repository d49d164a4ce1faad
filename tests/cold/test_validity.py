"""TTL, expiry, sweeping, refresh-on-read, validity and as_of."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from engram import Principal
from engram.stores.cold import LongTermStore, Options

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import Clock, StoreFactory

ME = Principal("t", "me")


def test_ttl_hides_then_sweep_deletes(store: LongTermStore, clock: Clock) -> None:
    store.put(("t", "me"), "short", {"text": "ephemeral note"}, ttl=60)  # minutes
    store.put(("t", "me"), "long", {"text": "durable note"})
    clock.advance(minutes=30)
    assert store.get(("t", "me"), "short") is not None
    clock.advance(minutes=31)
    assert store.get(("t", "me"), "short") is None
    assert [r.record.key for r in store.recall(ME, "note")] == ["long"]
    expired = store.recall(ME, "ephemeral note", include_expired=True)
    assert [r.record.key for r in expired][:1] == ["short"]
    assert store.sweep() == 1
    assert store.recall(ME, "ephemeral note", include_expired=True)[0].record.key == "long"
    assert store.history(ME, "short") == []


def test_remember_with_ttl_and_expires_at(store: LongTermStore, clock: Clock) -> None:
    a = store.remember(ME, "trip to Rome next week", ttl=timedelta(days=7), tags=["goal"])
    b = store.remember(ME, "meeting on friday", expires_at=clock.now + timedelta(days=2))
    assert a.record is not None and b.record is not None
    clock.advance(days=3)
    assert [r.record.text for r in store.recall(ME, "trip meeting")] == [a.record.text]


def test_refresh_on_read_extends_ttl(make_store: StoreFactory, clock: Clock) -> None:
    store = make_store(options=Options(refresh_on_read=True))
    store.put(("t", "me"), "k", {"text": "kept alive by reads"}, ttl=60)
    for _ in range(3):
        clock.advance(minutes=45)
        assert store.get(("t", "me"), "k") is not None
    clock.advance(minutes=61)
    assert store.get(("t", "me"), "k") is None


def test_without_refresh_reads_do_not_extend(store: LongTermStore, clock: Clock) -> None:
    store.put(("t", "me"), "k", {"text": "not refreshed"}, ttl=60)
    clock.advance(minutes=45)
    assert store.get(("t", "me"), "k") is not None
    clock.advance(minutes=45)
    assert store.get(("t", "me"), "k") is None


def test_update_supersedes_and_as_of_asks_the_past(store: LongTermStore, clock: Clock) -> None:
    first = store.remember(ME, "I live in Paris", slot="home_city", tags=["profile"])
    assert first.record is not None
    clock.advance(days=10)
    before = clock.now
    clock.advance(days=10)
    second = store.update(ME, first.record.key, "I live in Berlin", slot="home_city")
    assert second.action == "updated" and second.previous is not None
    now_found = store.recall(ME, "where do I live")
    assert [r.record.text for r in now_found] == ["I live in Berlin"]
    past = store.recall(ME, "where do I live", as_of=before)
    assert [r.record.text for r in past] == ["I live in Paris"]
    both = store.recall(ME, "where do I live", include_superseded=True)
    assert {r.record.text for r in both} == {"I live in Paris", "I live in Berlin"}
    versions = store.history(ME, first.record.key)
    assert [v.text for v in versions] == ["I live in Paris", "I live in Berlin"]
    assert versions[0].superseded_by == versions[1].id
    assert versions[0].valid_to == versions[1].valid_from


def test_future_validity_is_hidden_until_it_starts(store: LongTermStore, clock: Clock) -> None:
    start = clock.now + timedelta(days=5)
    store.remember(ME, "new job starts at Initech", valid_from=start, tags=["profile"])
    assert store.recall(ME, "job Initech") == []
    assert len(store.recall(ME, "job Initech", as_of=start + timedelta(hours=1))) == 1
    clock.advance(days=6)
    assert len(store.recall(ME, "job Initech")) == 1


def test_background_sweeper_deletes_expired_versions(store: LongTermStore, clock: Clock) -> None:
    import time

    store.put(("t", "me"), "gone", {"text": "short lived"}, ttl=1)
    store.put(("t", "me"), "kept", {"text": "long lived"})
    clock.advance(minutes=2)
    with store.start_sweeper(interval_seconds=0.01) as sweeper:
        deadline = time.monotonic() + 10
        while sweeper.removed == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert sweeper.removed == 1
    assert store.history(ME, "gone") == [] and len(store.history(ME, "kept")) == 1


def test_recall_with_refresh_keeps_facts_alive(make_store: StoreFactory, clock: Clock) -> None:
    store = make_store(options=Options(refresh_on_read=True))
    store.remember(ME, "reads keep this fact about owls alive", ttl=timedelta(days=2))
    store.remember(ME, "this fact about owls is never read", ttl=timedelta(days=2), tags=["x"])
    for _ in range(3):
        clock.advance(days=1.5)
        found = store.recall(ME, "reads keep alive", k=1)
        assert [r.record.text for r in found] == ["reads keep this fact about owls alive"]
    assert [r.record.text for r in store.recall(ME, "owls", k=5)] == [
        "reads keep this fact about owls alive"
    ]


def test_a_time_named_relative_to_today_finds_what_was_remembered_then(
    store: LongTermStore, clock: Clock
) -> None:
    """The date step dates "10 days ago" and "yesterday" from the recall's own moment,
    and a memory without a date field by the day it became valid."""
    store.remember(ME, "Bought a blender for the kitchen")
    clock.advance(days=9)
    store.remember(ME, "Bought a kettle for the kitchen")
    clock.advance(days=1)
    older = store.recall(ME, "what did I buy for the kitchen 10 days ago", k=2)
    assert [r.record.text for r in older][:1] == ["Bought a blender for the kitchen"]
    newer = store.recall(ME, "what did I buy for the kitchen yesterday", k=2)
    assert [r.record.text for r in newer][:1] == ["Bought a kettle for the kitchen"]


def test_a_new_value_from_a_future_day_is_refused_and_leaves_the_current_one(
    store: LongTermStore, clock: Clock
) -> None:
    """A version can only take over from now or the past: one dated later would hide the
    current value until then with nothing in its place."""
    import pytest

    from engram.errors import InvalidInputError

    first = store.remember(ME, "I live in Oslo", slot="home_city", tags=["profile"])
    assert first.record is not None
    with pytest.raises(InvalidInputError, match="future"):
        store.remember(
            ME, "I live in Paris", slot="home_city", valid_from=clock.now + timedelta(days=30)
        )
    with pytest.raises(InvalidInputError, match="future"):
        store.update(
            ME, first.record.key, "I live in Rome", valid_from=clock.now + timedelta(days=1)
        )
    assert [r.record.text for r in store.recall(ME, "where do I live")] == ["I live in Oslo"]


def test_a_backdated_new_value_never_leaves_an_interval_that_ends_before_it_starts(
    store: LongTermStore, clock: Clock
) -> None:
    first = store.remember(ME, "I drive a Golf", slot="car", tags=["profile"])
    assert first.record is not None
    clock.advance(days=2)
    store.remember(ME, "I drive a Tesla", slot="car", valid_from=clock.now - timedelta(days=3))
    for version in store.history(ME, first.record.key):
        assert version.valid_to is None or version.valid_to >= version.valid_from
    assert [r.record.text for r in store.recall(ME, "what do I drive")] == ["I drive a Tesla"]


def test_an_expiry_that_has_passed_is_refused(store: LongTermStore, clock: Clock) -> None:
    import pytest

    from engram.errors import InvalidInputError

    store.remember(ME, "My favourite colour is blue", slot="color", tags=["preference"])
    for when in (clock.now - timedelta(days=1), clock.now):
        with pytest.raises(InvalidInputError, match="expires_at"):
            store.remember(ME, "My favourite colour is red", slot="color", expires_at=when)
    assert [r.record.text for r in store.recall(ME, "colour")] == ["My favourite colour is blue"]


def test_an_update_keeps_what_it_does_not_change(store: LongTermStore) -> None:
    """A new version by key keeps the current version's tags, source, sensitivity and
    importance unless the update names them (so a write policy that asks for a stable tag
    lets it through)."""
    first = store.remember(
        ME, "I live in Oslo", tags=["profile"], sensitivity="high", importance=0.9
    )
    assert first.record is not None
    kept = store.update(ME, first.record.key, "I live in Bergen")
    assert kept.record is not None and kept.record.tags == ("profile",)
    assert (kept.record.sensitivity, kept.record.importance) == ("high", 0.9)
    changed = store.update(ME, first.record.key, "I live in Trondheim", tags=["fact"])
    assert changed.record is not None and changed.record.tags == ("fact",)
