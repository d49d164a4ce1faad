"""Opening a checkpointer from a URL gives a working LangGraph saver, sync and async."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from engram.stores.hot import aopen_checkpointer, open_checkpointer


class _State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph():  # type: ignore[no-untyped-def]
    builder = StateGraph(_State)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    return builder


REDIS = pytest.param("redis", marks=pytest.mark.redis)


@pytest.fixture(params=["memory", "sqlite", "postgres", REDIS])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hot.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(request.getfixturevalue("postgres_url"))


def test_sync_saver_persists_thread_state(url: str) -> None:
    cfg = {"configurable": {"thread_id": "t1"}}
    with open_checkpointer(url) as saver:
        graph = _graph().compile(checkpointer=saver)
        graph.invoke({"items": ["start"]}, cfg)
        graph.invoke({"items": ["again"]}, cfg)
        assert graph.get_state(cfg).values["items"] == ["start", "a", "again", "a"]


async def test_async_saver_persists_thread_state(url: str) -> None:
    cfg = {"configurable": {"thread_id": "t2"}}
    async with aopen_checkpointer(url) as saver:
        graph = _graph().compile(checkpointer=saver)
        await graph.ainvoke({"items": ["x"]}, cfg)
        assert (await graph.aget_state(cfg)).values["items"] == ["x", "a"]


def test_sqlite_state_survives_reopening(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nested' / 'hot.db'}"
    cfg = {"configurable": {"thread_id": "t"}}
    with open_checkpointer(url) as saver:
        _graph().compile(checkpointer=saver).invoke({"items": ["1"]}, cfg)
    with open_checkpointer(url) as saver:
        assert _graph().compile(checkpointer=saver).get_state(cfg).values["items"] == ["1", "a"]
