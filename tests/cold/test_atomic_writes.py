"""Writes decided and applied while holding the namespace, on every backend: a second
head for one key is a StaleWriteError, ``atomically`` nests and keeps its writes
together, and a lost race is retried by the store instead of raised."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from engram import Principal, StaleWriteError
from engram._retry import on_conflict
from engram.stores.cold import ChangeSet, LongTermStore, NewVersion, View

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import StoreFactory

ALICE = Principal("acme", "alice")


def _second_head(store: LongTermStore) -> ChangeSet:
    head = store.remember(ALICE, "Lives in Lisbon", slot="home").record
    assert head is not None
    return ChangeSet(inserts=(NewVersion(replace(head, id="other-version")),))


def test_a_second_current_version_of_a_key_is_a_stale_write(make_store: StoreFactory) -> None:
    store = make_store()
    if store.backend.__class__.__name__ == "InProcColdBackend":
        pytest.skip("capability: the in-process backend keeps no unique index")
    changes = _second_head(store)
    with pytest.raises(StaleWriteError):
        store.backend.apply(changes)
    assert len(store.history(ALICE, changes.inserts[0].record.key)) == 1


def test_atomically_nests_and_its_writes_land_together(make_store: StoreFactory) -> None:
    store = make_store()
    with store.backend.atomically(ALICE.namespace), store.backend.atomically(ALICE.namespace):
        store.remember(ALICE, "Prefers bonds", slot="style")
        store.remember(ALICE, "Prefers stocks", slot="style")
    current = [r for r in store.records(ALICE, View(store.now())) if r.value.get("slot")]
    assert [r.text for r in current] == ["Prefers stocks"]


def test_threads_writing_one_slot_leave_one_current_value(make_store: StoreFactory) -> None:
    store = make_store()
    said: Counter[str] = Counter()
    errors: list[BaseException] = []

    def work(index: int) -> None:
        for n in range(15):
            try:
                said[store.remember(ALICE, f"risk level {index} {n}", slot="risk").action] += 1
            except BaseException as exc:  # noqa: BLE001 - collected, the test fails on any
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    current = [r for r in store.records(ALICE, View(store.now())) if r.value.get("slot")]
    assert errors == [] and len(current) == 1
    assert said["added"] == 1
    assert said["added"] + said["updated"] == len(store.history(ALICE, current[0].key))


def test_a_write_that_lost_a_race_is_done_again(make_store: StoreFactory) -> None:
    store = make_store()
    real_apply, lost = store.backend.apply, []

    def apply_losing_once(changes: ChangeSet) -> None:
        if changes.inserts and not lost:
            lost.append(changes)
            raise StaleWriteError("another writer saved first")
        real_apply(changes)

    store.backend.apply = apply_losing_once  # type: ignore[method-assign]
    result = store.remember(ALICE, "Lives in Porto", slot="home")
    assert len(lost) == 1 and result.action == "added"
    assert [r.text for r in store.records(ALICE, View(store.now()))] == ["Lives in Porto"]


def test_a_conflict_that_never_clears_is_raised_after_the_attempts() -> None:
    tries: list[int] = []

    def always_stale() -> None:
        tries.append(1)
        raise StaleWriteError("lost again")

    with pytest.raises(StaleWriteError):
        on_conflict(always_stale, attempts=5, pause=0.0)
    assert len(tries) == 5
