"""A thread id no backend can store (a lone surrogate) is refused the same way by every
saver call, reads included: ``InvalidInputError``, never a driver's ``UnicodeEncodeError``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hot_graphs import story_graph

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
