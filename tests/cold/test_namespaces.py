"""Namespaces scope every read, label by label (never by string prefix)."""

from __future__ import annotations

from engram import Principal
from engram.stores.cold import LongTermStore
from engram.stores.cold.contract import Scan
from engram.stores.cold.records import View

U1 = Principal("t", "u1")
U10 = Principal("t", "u10")


def _seed(store: LongTermStore) -> None:
    store.remember(U1, "the launch code word is pineapple", tags=["profile"])
    store.remember(U10, "the launch code word is pineapple too", tags=["profile"])
    store.remember(("t", "u1", "notes"), "pineapple pizza is fine", tags=["preference"])
    store.remember(("t", "u1x"), "pineapple everywhere", tags=["preference"])


def test_recall_never_crosses_namespaces(store: LongTermStore) -> None:
    _seed(store)
    found = store.recall(U1, "pineapple launch code", k=20)
    assert {r.record.namespace for r in found} == {("t", "u1"), ("t", "u1", "notes")}
    other = store.recall(U10, "pineapple launch code", k=20)
    assert {r.record.namespace for r in other} == {("t", "u10")}


def test_search_and_list_never_cross_namespaces(store: LongTermStore) -> None:
    _seed(store)
    assert {i.namespace for i in store.search(("t", "u1"), limit=50)} == {
        ("t", "u1"),
        ("t", "u1", "notes"),
    }
    assert {i.namespace for i in store.search(("t", "u1"), query="pineapple", limit=50)} == {
        ("t", "u1"),
        ("t", "u1", "notes"),
    }
    assert store.list_namespaces(prefix=("t", "u1")) == [("t", "u1"), ("t", "u1", "notes")]


def test_forget_erases_only_the_principal(store: LongTermStore) -> None:
    _seed(store)
    report = store.forget(U1)
    assert report.keys == 2 and report.versions == 2
    assert store.recall(U1, "pineapple") == []
    assert len(store.recall(U10, "pineapple")) == 1
    assert len(store.recall(("t", "u1x"), "pineapple")) == 1


def test_same_key_in_two_namespaces_is_two_items(store: LongTermStore) -> None:
    store.put(("t", "u1"), "k", {"text": "one"})
    store.put(("t", "u1", "sub"), "k", {"text": "sub"})
    store.delete(("t", "u1"), "k")
    assert store.get(("t", "u1"), "k") is None
    item = store.get(("t", "u1", "sub"), "k")
    assert item is not None and item.value["text"] == "sub"


def _tagged(store: LongTermStore, prefix: tuple[str, ...], *tags: str) -> set[str]:
    view = View(store.now())
    return {r.text for r in store.backend.scan(Scan(prefix, view, tags=tags, limit=50))}


def test_tag_lookups_stay_in_the_namespace_and_follow_deletes(store: LongTermStore) -> None:
    _seed(store)
    store.remember(U1, "rides a bike to work", tags=["fact"])
    assert _tagged(store, U1.namespace, "profile", "preference") == {
        "the launch code word is pineapple",
        "pineapple pizza is fine",
    }
    assert _tagged(store, ("t", "u1", "notes"), "preference") == {"pineapple pizza is fine"}
    assert _tagged(store, U10.namespace, "preference") == set()
    assert _tagged(store, ("t",), "preference") == {
        "pineapple pizza is fine",
        "pineapple everywhere",
    }
    store.forget(U1)
    store.remember(U1, "walks to work now", tags=["fact"])  # may reuse a deleted row's slot
    assert _tagged(store, U1.namespace, "profile", "preference", "fact") == {"walks to work now"}
