"""Time travel as LangGraph does it, and forks that behave like it.

LangGraph's own idiom is ``snapshot = next(graph.get_state_history(config))`` and then
``graph.get_state(snapshot.config)``, ``graph.invoke(None, snapshot.config)`` or
``graph.update_state(snapshot.config, ...)``: the configs a saver hands back must work
where the caller's config did. A replay from a past checkpoint reruns its step, so an
interrupt that was answered later asks again; an engram fork of that checkpoint must
too, and never carries a human's answer into the new thread. Every backend.
"""

from __future__ import annotations

from typing import Any

from hot_graphs import story_graph
from langgraph._internal._constants import NULL_TASK_ID
from langgraph.checkpoint.serde.types import RESUME
from langgraph.types import Command

from engram import Principal
from engram.stores.hot import (
    TENANT_KEY,
    USER_KEY,
    AsyncThreads,
    Threads,
    aopen_checkpointer,
    open_checkpointer,
    thread_config,
)

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")


def _principal_of(config: Any) -> tuple[Any, Any]:
    configurable = (config or {}).get("configurable", {})
    return configurable.get(TENANT_KEY), configurable.get(USER_KEY)


def _answered(graph: Any, thread_id: str) -> Any:
    """Run the approval graph to its end (answered "yes"); the snapshot before ``ask``."""
    config = thread_config(thread_id, ALICE)
    graph.invoke({"items": ["start"]}, config)
    graph.invoke(Command(resume="yes"), config)
    return next(s for s in graph.get_state_history(config) if s.next == ("ask",))


def test_a_fork_from_before_an_answered_interrupt_asks_again(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        before = _answered(graph, "t")
        fork = Threads(saver).fork("t", before.config["configurable"]["checkpoint_id"], "t2", ALICE)
        state = graph.get_state(fork.config)
        assert state.next == ("ask",) and "answer" not in state.values
        paused = graph.invoke(None, fork.config)  # the step reruns: the question comes back
        assert [i.value for i in paused["__interrupt__"]] == ["approve?"]
        assert "answer" not in paused and "c" not in paused["items"]
        done = graph.invoke(Command(resume="no"), fork.config)
        assert done["answer"] == "no" and done["items"] == ["start", "a", "b", "c"]
        assert graph.get_state(thread_config("t", ALICE)).values["answer"] == "yes"
        replayed = graph.invoke(None, before.config)  # LangGraph's own time travel agrees
        assert [i.value for i in replayed["__interrupt__"]] == ["approve?"]


async def test_an_async_fork_from_before_an_answered_interrupt_asks_again(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        config = thread_config("t", ALICE)
        await graph.ainvoke({"items": ["start"]}, config)
        await graph.ainvoke(Command(resume="yes"), config)
        history = [s async for s in graph.aget_state_history(config)]
        before = next(s for s in history if s.next == ("ask",))
        checkpoint_id = before.config["configurable"]["checkpoint_id"]
        fork = await AsyncThreads(saver).fork("t", checkpoint_id, "t2", ALICE)
        paused = await graph.ainvoke(None, fork.config)
        assert [i.value for i in paused["__interrupt__"]] == ["approve?"]


def test_a_fork_of_the_paused_head_still_waits_for_its_answer(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        graph.invoke({"items": ["start"]}, thread_config("t", ALICE))
        threads = Threads(saver)
        fork = threads.fork("t", threads.history("t", ALICE)[0].checkpoint_id, "t2", ALICE)
        state = graph.get_state(fork.config)
        assert state.next == ("ask",) and [i.value for i in state.interrupts] == ["approve?"]
        assert graph.invoke(Command(resume="no"), fork.config)["answer"] == "no"


def test_a_fork_never_carries_a_stored_answer(hot_url: str) -> None:
    """A crash after the answer was stored but before the step ran leaves it on the
    head: resuming the thread uses it, a fork of that head asks again."""
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        config = thread_config("t", ALICE)
        graph.invoke({"items": ["start"]}, config)
        head = graph.get_state(config).config
        saver.put_writes(thread_config(**head["configurable"], principal=ALICE),
                         [(RESUME, "yes")], NULL_TASK_ID)  # fmt: skip
        threads = Threads(saver)
        fork = threads.fork("t", threads.history("t", ALICE)[0].checkpoint_id, "t2", ALICE)
        paused = graph.invoke(None, fork.config)
        assert [i.value for i in paused["__interrupt__"]] == ["approve?"]
        assert graph.invoke(None, config)["answer"] == "yes"  # the source resumes as before


def test_configs_the_saver_returns_carry_the_readers_principal(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        config = thread_config("t", ALICE)
        graph.invoke({"items": ["start"]}, config)
        history = list(graph.get_state_history(config))
        for snapshot in history:
            assert _principal_of(snapshot.config) == ALICE.namespace
        assert all(_principal_of(s.parent_config) == ALICE.namespace for s in history[:-1])
        found = saver.get_tuple(config)
        assert found is not None and _principal_of(found.config) == ALICE.namespace
        unscoped = saver.get_tuple(thread_config("t"))  # the application's own read
        assert unscoped is not None and _principal_of(unscoped.config) == (None, None)
        assert list(saver.list(thread_config("t", BOB))) == []


def test_langgraphs_time_travel_idiom_works_on_returned_configs(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        config = thread_config("t", ALICE)
        graph.invoke({"items": ["start"]}, config)
        mid = list(graph.get_state_history(config))[2]  # after "a"
        assert graph.get_state(mid.config).values == mid.values == {
            "items": ["start", "a"], "note": "after a"
        }  # fmt: skip
        assert graph.invoke(None, mid.config)["items"] == ["start", "a", "b", "c"]
        edited = graph.update_state(mid.config, {"items": ["edit"]})
        assert _principal_of(edited) == ALICE.namespace
        assert graph.invoke(None, edited)["items"] == ["start", "a", "edit", "b", "c"]
        assert Threads(saver).owner("t") == ALICE


async def test_async_configs_the_saver_returns_round_trip(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        config = thread_config("t", ALICE)
        await graph.ainvoke({"items": ["start"]}, config)
        mid = [s async for s in graph.aget_state_history(config)][2]
        assert _principal_of(mid.config) == ALICE.namespace
        assert (await graph.aget_state(mid.config)).values["items"] == ["start", "a"]
        assert (await graph.ainvoke(None, mid.config))["items"] == ["start", "a", "b", "c"]


def test_a_forks_config_carries_its_owner(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["start"]}, thread_config("t", ALICE))
        threads = Threads(saver)
        first = threads.history("t", ALICE)[-1].checkpoint_id
        fork = threads.fork("t", first, "t2", ALICE)
        assert _principal_of(fork.config) == ALICE.namespace
        assert graph.invoke(None, fork.config)["items"] == ["start", "a", "b", "c"]
