"""``LongTermStore.remember_many`` on every backend: a batch's facts are decided one
after another, each against the batch's earlier writes, and an error mid-call leaves
stored at least what ``progress`` acknowledged (exactly that on the SQL engines, whose
batch is one transaction)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from engram import ConflictError
from engram.stores.cold import Fact, LongTermStore, NewFact, Resolution, RuleResolver

if TYPE_CHECKING:
    from conftest import StoreFactory

NS = ("acme", "alice")
TRANSACTIONAL = {"sqlite", "postgres"}


def test_later_items_of_one_batch_see_the_earlier_ones(store: LongTermStore) -> None:
    facts = [
        NewFact("Risk tolerance is low", slot="risk", tags=("preference",)),
        NewFact("Follows NVDA and AMD every quarter"),
        NewFact("Risk tolerance is high", slot="risk", tags=("preference",)),
        NewFact("Follows NVDA and AMD every quarter"),
        NewFact("Risk tolerance is no longer high", slot="risk", tags=("preference",)),
    ]
    results = store.remember_many(NS, facts, batch_size=8)
    assert [r.action for r in results] == ["added", "added", "updated", "noop", "deleted"]
    assert results[2].previous is not None
    assert results[2].previous.text == "Risk tolerance is low"
    assert [r.text for r in store.records(NS, limit=50)] == ["Follows NVDA and AMD every quarter"]


class _FailingAt:
    """The rule resolver, failing at its ``at``-th decision."""

    def __init__(self, at: int) -> None:
        self.left = at

    def resolve(self, fact: Fact, existing: object) -> Resolution:
        self.left -= 1
        if self.left <= 0:
            raise ConflictError("the store failed mid-call")
        return RuleResolver().resolve(fact, existing)  # type: ignore[arg-type]


def test_an_error_mid_batch_stores_what_was_acknowledged(
    make_store: StoreFactory, backend_name: str
) -> None:
    store = make_store(resolver=_FailingAt(7))
    acknowledged: list[int] = []
    facts = [NewFact(f"Visited museum number {n} in the spring") for n in range(12)]
    with pytest.raises(ConflictError, match="mid-call"):
        store.remember_many(NS, facts, batch_size=4, progress=acknowledged.append)
    assert acknowledged == [4]
    stored = sorted(r.text for r in store.records(NS, limit=50))
    if backend_name in TRANSACTIONAL:
        assert stored == sorted(f.text for f in facts[:4])
    else:  # writes apply as they come: the unacknowledged ones may stay
        assert stored == sorted(f.text for f in facts[:6])
    if backend_name != "memory":  # memory:// keeps its data in the store object alone
        again = make_store()
        assert sorted(r.text for r in again.records(NS, limit=50)) == stored  # committed
