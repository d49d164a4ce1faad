"""A thread id no backend can store (a lone surrogate) is refused the same way by every
saver call, reads included: ``InvalidInputError``, never a driver's ``UnicodeEncodeError``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hot_graphs import story_graph
from langgraph.checkpoint.base import CheckpointTuple

from engram import Principal
from engram.errors import InvalidInputError
from engram.stores.hot import aopen_checkpointer, open_checkpointer, thread_config

ALICE = Principal("acme", "alice")
SURROGATE = "a\ud800b"


def _config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def test_a_lone_surrogate_thread_id_is_invalid_input_everywhere(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, thread_config("kept", ALICE))
        calls = (
            lambda: graph.invoke({"items": ["x"]}, _config(SURROGATE)),
            lambda: graph.get_state(_config(SURROGATE)),
            lambda: list(graph.get_state_history(_config(SURROGATE))),
            lambda: saver.get_tuple(_config(SURROGATE)),
            lambda: list(saver.list(_config(SURROGATE))),
            lambda: saver.delete_thread(SURROGATE),
            lambda: saver.prune([SURROGATE]),
            lambda: saver.copy_thread("kept", SURROGATE),
            lambda: saver.copy_thread(SURROGATE, "other"),
        )
        for call in calls:
            with pytest.raises(InvalidInputError, match="thread_id is not valid Unicode"):
                call()
        assert graph.get_state(thread_config("kept", ALICE)).values["items"][-1] == "c"


async def test_async_reads_of_a_lone_surrogate_thread_id_are_invalid_input(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        calls = (
            lambda: graph.ainvoke({"items": ["x"]}, _config(SURROGATE)),
            lambda: graph.aget_state(_config(SURROGATE)),
            lambda: saver.aget_tuple(_config(SURROGATE)),
            lambda: saver.adelete_thread(SURROGATE),
        )
        for call in calls:
            with pytest.raises(InvalidInputError, match="thread_id is not valid Unicode"):
                await call()
        with pytest.raises(InvalidInputError):
            [t async for t in saver.alist(_config(SURROGATE))]


def _at(thread_id: str, **configurable: Any) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **configurable}}


def _kept_thread(saver: Any) -> tuple[Any, CheckpointTuple, Any]:
    """Thread "kept" of Alice, run once: its graph, latest checkpoint and that one's config."""
    graph = story_graph(saver)
    graph.invoke({"items": ["x"]}, thread_config("kept", ALICE))
    latest = saver.get_tuple(_config("kept"))
    assert latest is not None
    return graph, latest, _at("kept", checkpoint_id=latest.config["configurable"]["checkpoint_id"])


def test_every_id_a_saver_call_takes_is_checked_alike_everywhere(hot_url: str) -> None:
    """A checkpoint id, namespace, task id, task path or channel no write could store, a
    missing thread id or a filter no backend can match: ``InvalidInputError`` on every
    backend (never a driver's ``UnicodeEncodeError``, ``KeyError`` or SQL error), and
    nothing stored."""
    with open_checkpointer(hot_url) as saver:
        _, latest, at = _kept_thread(saver)
        checkpoint = {**latest.checkpoint, "id": SURROGATE}
        calls = (
            lambda: saver.get_tuple(_at("kept", checkpoint_id=SURROGATE)),
            lambda: saver.get_tuple(_at("kept", checkpoint_id="a\x00b")),
            lambda: saver.get_tuple(_at("kept", checkpoint_id=5)),
            lambda: saver.get_tuple({"configurable": {"thread_id": "kept", "checkpoint_ns": 7}}),
            lambda: saver.get_tuple(
                {"configurable": {"thread_id": "kept", "checkpoint_ns": SURROGATE}}
            ),
            lambda: saver.get_tuple({"configurable": {}}),
            lambda: list(saver.list(_config("kept"), before=_at("kept", checkpoint_id=SURROGATE))),
            lambda: list(saver.list(_config("kept"), filter={"source": SURROGATE})),
            lambda: list(saver.list(_config("kept"), filter={"step": object()})),
            lambda: list(saver.list(_config("kept"), filter={SURROGATE: 1})),
            lambda: list(saver.list(_config("kept"), filter="step")),
            lambda: list(saver.list(_config("kept"), limit=-1)),
            lambda: list(saver.list(_config("kept"), limit="2")),
            lambda: list(saver.list({"configurable": {"tenant_id": "acme", "user_id": "bob"}})),
            lambda: saver.put_writes(at, [("note", "v")], SURROGATE),
            lambda: saver.put_writes(at, [("note", "v")], "a\x00b"),
            lambda: saver.put_writes(at, [("note", "v")], 5),
            lambda: saver.put_writes(at, [("note", "v")], "task", SURROGATE),
            lambda: saver.put_writes(at, [(SURROGATE, "v")], "task"),
            lambda: saver.put_writes(_at("kept"), [("note", "v")], "task"),
            lambda: saver.put(at, checkpoint, {}, {}),
            lambda: saver.put({"configurable": {}}, latest.checkpoint, {}, {}),
        )
        for call in calls:
            with pytest.raises(InvalidInputError):
                call()
        after = saver.get_tuple(_config("kept"))
        assert after is not None and after.pending_writes == latest.pending_writes
        assert len(list(saver.list(_config("kept")))) == 5
        assert list(saver.list(_config("kept"), limit=0)) == []


async def test_async_saver_calls_check_every_id(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        await story_graph(saver).ainvoke({"items": ["x"]}, thread_config("kept", ALICE))
        latest = await saver.aget_tuple(_config("kept"))
        assert latest is not None
        at = _at("kept", checkpoint_id=latest.config["configurable"]["checkpoint_id"])
        calls = (
            lambda: saver.aget_tuple(_at("kept", checkpoint_id=SURROGATE)),
            lambda: saver.aget_tuple({"configurable": {}}),
            lambda: saver.aput_writes(at, [("note", "v")], SURROGATE),
        )
        for call in calls:
            with pytest.raises(InvalidInputError):
                await call()
        with pytest.raises(InvalidInputError):
            [t async for t in saver.alist(_config("kept"), filter={"step": object()})]


def test_metadata_no_backend_stores_alike_is_invalid_input(hot_url: str) -> None:
    """A checkpoint's metadata (its own, or the config's that LangGraph adds) with a key
    holding NUL, or a lone surrogate anywhere, or a NUL below the top level: PostgreSQL
    cannot store them and SQLite would; refused alike everywhere, nothing stored."""
    with open_checkpointer(hot_url) as saver:
        graph, latest, at = _kept_thread(saver)
        checkpoint = {**latest.checkpoint, "id": "next"}
        calls = (
            lambda: graph.invoke({"items": ["x"]}, {**_config("new"), "metadata": {"k\x00": 1}}),
            lambda: graph.invoke(
                {"items": ["x"]}, {**_config("new"), "metadata": {"s": SURROGATE}}
            ),
            lambda: graph.invoke(
                {"items": ["x"]},
                _config("new") | {"configurable": {"thread_id": "new", SURROGATE: "v"}},
            ),
            lambda: saver.put(at, checkpoint, {"why": {"deep": "a\x00b"}}, {}),  # type: ignore[typeddict-unknown-key]
            lambda: saver.put(at, checkpoint, {"why": [SURROGATE]}, {}),  # type: ignore[typeddict-unknown-key]
        )
        for call in calls:
            with pytest.raises(InvalidInputError, match="metadata"):
                call()
        assert saver.get_tuple(_config("new")) is None
        assert len(list(saver.list(_config("kept")))) == 5
        graph.invoke({"items": ["x"]}, {**_config("new"), "metadata": {"note": "a\x00b"}})
        stored = saver.get_tuple(_config("new"))
        assert stored is not None and stored.metadata["note"] == "ab"  # LangGraph strips it
