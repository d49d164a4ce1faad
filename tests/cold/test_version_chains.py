"""A key's versions stay a coherent chain: a closed version keeps its end when the next
write arrives, a sweep never leaves a version pointing at one it removed nor brings an
older one back, and refresh-on-read extends only what is live."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from engram import Principal
from engram.stores.cold import LongTermStore, MemoryRecord, Options

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import Clock, StoreFactory

ME = Principal("t", "me")


def _texts(found: list[MemoryRecord]) -> list[str]:
    return [r.text for r in found]


def _coherent(versions: list[MemoryRecord]) -> None:
    """Every ``superseded_by`` names a version of the same key that is still stored."""
    ids = {v.id for v in versions}
    assert all(v.superseded_by is None or v.superseded_by in ids for v in versions), versions


def test_a_retracted_version_stays_ended_when_the_key_is_written_again(
    store: LongTermStore, clock: Clock
) -> None:
    store.remember(ME, "Likes jazz music", key="music")
    clock.advance(days=1)
    store.retract(ME, "music")
    retracted = clock.now
    clock.advance(days=10)
    store.remember(ME, "Likes rock music", key="music")
    day6 = retracted + timedelta(days=5)
    assert [r.record.text for r in store.recall(ME, "music", as_of=day6, context=None)] == []
    jazz, rock = store.history(ME, "music")
    assert jazz.valid_to is not None and jazz.valid_to <= retracted
    assert jazz.superseded_by == rock.id
    assert [r.record.text for r in store.recall(ME, "music", context=None)] == [rock.text]


def test_a_version_given_an_end_keeps_it_when_superseded(
    store: LongTermStore, clock: Clock
) -> None:
    start = clock.now - timedelta(days=30)
    end = clock.now - timedelta(days=20)
    store.remember(ME, "Lived in Oslo", key="home", valid_from=start, valid_to=end)
    store.remember(ME, "Lives in Bergen", key="home")
    oslo, _ = store.history(ME, "home")
    assert oslo.valid_to == end
    later = end + timedelta(days=5)
    assert [r.record.text for r in store.recall(ME, "Oslo", as_of=later, context=None)] == []


def test_sweeping_an_expired_head_leaves_the_older_version_ended_not_current(
    store: LongTermStore, clock: Clock
) -> None:
    store.remember(ME, "Lives in Oslo", key="home")
    clock.advance(hours=1)
    bergen = store.remember(ME, "Lives in Bergen", key="home", ttl=timedelta(days=1))
    assert bergen.record is not None
    clock.advance(days=2)
    assert store.sweep() == 1
    (oslo,) = store.history(ME, "home")
    _coherent([oslo])
    assert oslo.valid_to == bergen.record.valid_from
    assert store.get(("t", "me"), "home") is None
    assert _texts(store.records(ME)) == []
    assert [r.record.text for r in store.recall(ME, "Oslo", context=None)] == []
    trondheim = store.remember(ME, "Lives in Trondheim", key="home")
    assert trondheim.record is not None
    versions = store.history(ME, "home")
    _coherent(versions)
    assert [(v.text, v.superseded_by) for v in versions] == [
        ("Lives in Oslo", trondheim.record.id),
        ("Lives in Trondheim", None),
    ]
    assert versions[0].valid_to == bergen.record.valid_from
    assert _texts(store.records(ME)) == ["Lives in Trondheim"]


def test_sweeping_expired_versions_mid_chain_links_past_them(
    store: LongTermStore, clock: Clock
) -> None:
    first = store.remember(ME, "Desk on floor 1", key="desk")
    store.remember(ME, "Desk on floor 2", key="desk", ttl=timedelta(hours=1))
    store.remember(ME, "Desk on floor 3", key="desk", ttl=timedelta(hours=2))
    fourth = store.remember(ME, "Desk on floor 4", key="desk")
    assert first.record is not None and fourth.record is not None
    clock.advance(hours=3)
    assert store.sweep() == 2
    versions = store.history(ME, "desk")
    _coherent(versions)
    assert [(v.text, v.superseded_by) for v in versions] == [
        ("Desk on floor 1", fourth.record.id),
        ("Desk on floor 4", None),
    ]
    assert _texts(store.records(ME)) == ["Desk on floor 4"]


def test_sweeping_a_chain_of_expired_versions_leaves_no_head_live(
    store: LongTermStore, clock: Clock
) -> None:
    store.remember(ME, "Parks in bay 1", key="bay")
    store.remember(ME, "Parks in bay 2", key="bay", ttl=timedelta(hours=1))
    store.remember(ME, "Parks in bay 3", key="bay", ttl=timedelta(hours=1))
    clock.advance(hours=2)
    assert store.sweep() == 2
    versions = store.history(ME, "bay")
    _coherent(versions)
    assert [(v.text, v.superseded_by) for v in versions] == [("Parks in bay 1", None)]
    assert _texts(store.records(ME)) == []
    store.remember(ME, "Parks in bay 4", key="bay")
    assert _texts(store.records(ME)) == ["Parks in bay 4"]


def test_an_audit_read_of_an_expired_fact_does_not_revive_it(
    make_store: StoreFactory, clock: Clock
) -> None:
    store = make_store(options=Options(refresh_on_read=True))
    store.remember(ME, "Temporary door code 4711", key="code", ttl=timedelta(hours=1))
    clock.advance(hours=2)
    audit = store.recall(ME, "door code", include_expired=True, context=None)
    assert [r.record.text for r in audit] == ["Temporary door code 4711"]
    assert store.recall(ME, "door code", context=None) == []
    assert store.get(("t", "me"), "code") is None
    assert store.sweep() == 1


def test_a_read_of_history_does_not_extend_a_superseded_version(
    make_store: StoreFactory, clock: Clock
) -> None:
    store = make_store(options=Options(refresh_on_read=True))
    old = store.remember(ME, "Gate code 1111", key="gate", ttl=timedelta(hours=1))
    store.remember(ME, "Gate code 2222", key="gate", ttl=timedelta(hours=1))
    assert old.record is not None and old.record.expires_at is not None
    clock.advance(minutes=30)
    found = store.recall(ME, "gate code", include_superseded=True, context=None)
    assert "Gate code 1111" in [r.record.text for r in found]
    first = store.history(ME, "gate")[0]
    assert first.expires_at == old.record.expires_at
