"""Small deterministic graphs the hot-tier tests run."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class Story(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    note: str
    answer: str


def _step(name: str) -> Any:
    return lambda state: {"items": [name], "note": f"after {name}"}


def _ask(state: Story) -> Story:
    return {"answer": str(interrupt("approve?"))}


def story_graph(checkpointer: Any, *, ask: bool = False) -> Any:
    """START -> a -> b -> (ask, which interrupts) -> c -> END."""
    builder = StateGraph(Story)
    for name in ("a", "b", "c"):
        builder.add_node(name, _step(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    if ask:
        builder.add_node("ask", _ask)
        builder.add_edge("b", "ask")
        builder.add_edge("ask", "c")
    else:
        builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=checkpointer)


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread_id}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def nested_graph(checkpointer: Any, *, ask: bool = False) -> Any:
    """START -> pre -> sub (a subgraph: s1 -> s2, s2 may interrupt) -> END."""
    sub = StateGraph(Story)
    sub.add_node("s1", _step("s1"))
    sub.add_node("s2", _ask if ask else _step("s2"))
    sub.add_edge(START, "s1")
    sub.add_edge("s1", "s2")
    sub.add_edge("s2", END)
    builder = StateGraph(Story)
    builder.add_node("pre", _step("pre"))
    builder.add_node("sub", sub.compile())
    builder.add_edge(START, "pre")
    builder.add_edge("pre", "sub")
    builder.add_edge("sub", END)
    return builder.compile(checkpointer=checkpointer)
