"""LangGraph BaseStore compatibility: CRUD, search, namespaces, batch, async, graphs."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, PutOp, SearchOp

from engram import InvalidInputError, Principal
from engram.stores.cold import LongTermStore


def test_put_get_overwrite_delete(store: LongTermStore) -> None:
    ns = ("acme", "alice")
    assert store.get(ns, "k") is None
    store.put(ns, "k", {"text": "likes tea", "n": 1})
    first = store.get(ns, "k")
    assert first is not None and first.value == {"text": "likes tea", "n": 1}
    store.put(ns, "k", {"text": "likes coffee", "n": 2})
    second = store.get(ns, "k")
    assert second is not None and second.value["n"] == 2
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert [r.value["n"] for r in store.history(ns, "k")] == [1, 2]
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    assert store.history(ns, "k") == []


def test_search_without_query_filters_and_pages(store: LongTermStore) -> None:
    for i in range(5):
        store.put(("docs", "a"), f"k{i}", {"text": f"doc {i}", "i": i})
    items = store.search(("docs",), filter={"i": {"$gte": 1}}, limit=2, offset=1)
    assert [it.key for it in items] == ["k3", "k2"]  # newest first, after skipping k4
    assert all(it.score is None for it in items)


def test_search_with_query_ranks_the_match_first(store: LongTermStore) -> None:
    ns = ("docs", "a")
    store.put(ns, "py", {"text": "python tutorial for beginners"})
    store.put(ns, "ts", {"text": "typescript guide"})
    store.put(ns, "go", {"text": "cooking pasta at home"})
    found = store.search(("docs",), query="python tutorial", limit=2)
    assert found[0].key == "py" and found[0].score is not None
    assert len(found) == 2


def test_index_false_is_stored_but_not_searched(store: LongTermStore) -> None:
    store.put(("d", "x"), "hidden", {"text": "secret plans"}, index=False)
    assert store.get(("d", "x"), "hidden") is not None
    assert store.search(("d",), query="secret plans") == []


def test_list_namespaces(store: LongTermStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b")]:
        store.put(ns, "k", {"text": "v"})
    assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "x")]
    assert store.list_namespaces(suffix=("b",)) == [("z", "b")]
    assert store.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "x")]
    assert store.list_namespaces(limit=1, offset=1) == [("a", "b", "d")]


def test_batch_runs_ops_in_order(store: LongTermStore) -> None:
    results = store.batch(
        [
            PutOp(("n", "1"), "k", {"text": "hello"}),
            GetOp(("n", "1"), "k"),
            SearchOp(("n",), query="hello"),
            PutOp(("n", "1"), "k", None),
            GetOp(("n", "1"), "k"),
        ]
    )
    assert results[0] is None and results[1] is not None
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert results[4] is None


@pytest.mark.parametrize(
    "namespace",
    [("",), ("acme\x1fu1",), ("acme", "u\x00"), ("a\nb",), "acme", ("\udc80",), (1,)],
)
def test_invalid_namespace_is_refused_on_every_path(store: LongTermStore, namespace: Any) -> None:
    store.put(("acme", "u1"), "k", {"text": "u1's secret"})
    for call in (
        lambda: store.put(namespace, "k", {"text": "x"}),
        lambda: store.get(namespace, "k"),
        lambda: store.search(namespace, query="secret"),
        lambda: store.batch([GetOp(namespace, "k")]),
        lambda: store.batch([PutOp(namespace, "k", {"text": "x"})]),
        lambda: store.batch([SearchOp(namespace, query="secret")]),
    ):
        with pytest.raises(InvalidInputError):
            call()
    assert store.search(("acme",)) != [] and len(store.search(())) == 1
    with pytest.raises(InvalidInputError):
        store.put(("langgraph", "x"), "k", {"text": "x"})


def test_a_dot_is_a_plain_character_in_labels(store: LongTermStore) -> None:
    dotted = Principal("acme", "alice.smith")
    store.put(dotted.namespace, "k", {"text": "dotted user's fact"})
    assert store.get(("acme", "alice.smith"), "k") is not None
    assert store.get(("acme", "alice", "smith"), "k") is None
    assert store.search(("acme", "alice")) == []
    assert [r.record.key for r in store.recall(dotted, "dotted fact")] == ["k"]


async def test_async_twins_share_the_sync_logic(store: LongTermStore) -> None:
    await store.aput(("a", "b"), "k", {"text": "async works"})
    item = await store.aget(("a", "b"), "k")
    assert item is not None and item.value["text"] == "async works"
    found = await store.asearch(("a",), query="async")
    assert [f.key for f in found] == ["k"]
    result = await store.aremember(("a", "c"), "remembered asynchronously", tags=["profile"])
    assert result.action == "added"
    recalled = await store.arecall(("a", "c"), "asynchronously")
    assert recalled[0].record.text == "remembered asynchronously"


class _State(TypedDict):
    user: str
    answer: str


def _remember_node(state: _State, *, store: BaseStore) -> dict[str, str]:
    store.put(("mem", state["user"]), "fav", {"text": "favourite colour is teal"})
    return {}


def _recall_node(state: _State, *, store: BaseStore) -> dict[str, str]:
    found = store.search(("mem", state["user"]), query="favourite colour")
    return {"answer": found[0].value["text"] if found else ""}


def test_compiles_into_a_langgraph_graph(store: LongTermStore) -> None:
    builder = StateGraph(_State)
    builder.add_node("remember", _remember_node)
    builder.add_node("recall", _recall_node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)
    out = graph.invoke({"user": "u1", "answer": ""})
    assert out["answer"] == "favourite colour is teal"
    assert store.get(("mem", "u1"), "fav") is not None
