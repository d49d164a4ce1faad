"""Retention: prune a thread to its last N checkpoints without changing what they hold."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hot_graphs import cfg, nested_graph, story_graph
from langgraph.types import Command

from engram.errors import InvalidInputError
from engram.stores.hot import Threads, open_checkpointer

KEEP = 3


def _snapshot(graph: Any, thread_id: str, checkpoint_id: str) -> tuple[Any, ...]:
    state = graph.get_state(cfg(thread_id, checkpoint_id))
    interrupts = tuple(i.value for t in state.tasks for i in t.interrupts)
    return (state.values, state.next, interrupts)


def _ids(graph: Any, thread_id: str) -> list[str]:
    return [
        s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg(thread_id))
    ]


def _two_identical_threads(graph: Any) -> None:
    for thread_id in ("pruned", "twin"):
        graph.invoke({"items": ["first"]}, cfg(thread_id))
        graph.invoke({"items": ["second"]}, cfg(thread_id))


def test_prune_keeps_the_state_of_every_retained_checkpoint(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        threads = Threads(saver)
        _two_identical_threads(graph)
        before_ids = _ids(graph, "pruned")
        kept_ids = before_ids[:KEEP]
        before = {c: _snapshot(graph, "pruned", c) for c in kept_ids}
        size_before = threads.sizes(["pruned"])[0]

        report = threads.prune("pruned", keep_last=KEEP)

        assert report.deleted_checkpoints == len(before_ids) - KEEP and report.kept == KEEP
        assert _ids(graph, "pruned") == kept_ids
        assert {c: _snapshot(graph, "pruned", c) for c in kept_ids} == before
        size_after = threads.sizes(["pruned"])[0]
        assert size_after.checkpoints == KEEP < size_before.checkpoints
        assert size_after.total_bytes < size_before.total_bytes
        assert threads.sizes(["twin"])[0].checkpoints == len(before_ids)


def test_replaying_each_retained_checkpoint_matches_the_unpruned_twin(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _two_identical_threads(graph)
        twin_ids = _ids(graph, "twin")[:KEEP]
        Threads(saver).prune("pruned", keep_last=KEEP)
        pruned_ids = _ids(graph, "pruned")
        for pruned_id, twin_id in zip(pruned_ids, twin_ids, strict=True):
            replayed = graph.invoke(None, cfg("pruned", pruned_id))
            assert replayed == graph.invoke(None, cfg("twin", twin_id))


def test_thread_continues_after_pruning(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _two_identical_threads(graph)
        Threads(saver).prune("pruned", keep_last=1)
        result = graph.invoke({"items": ["third"]}, cfg("pruned"))
        twin = graph.invoke({"items": ["third"]}, cfg("twin"))
        assert result == twin
        assert result["items"][-4:] == ["third", "a", "b", "c"]


def test_pending_interrupt_survives_pruning_and_resumes(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        graph.invoke({"items": ["start"]}, cfg("t"))
        paused = graph.get_state(cfg("t"))
        assert paused.next == ("ask",) and paused.tasks[0].interrupts
        report = Threads(saver).prune("t", keep_last=1)
        assert report.deleted_checkpoints > 0
        resumed = graph.get_state(cfg("t"))
        assert resumed.next == ("ask",)
        assert [i.value for i in resumed.tasks[0].interrupts] == ["approve?"]
        final = graph.invoke(Command(resume="yes"), cfg("t"))
        assert final["answer"] == "yes" and final["items"][-1] == "c"


def test_pruning_more_than_exists_removes_nothing(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, cfg("t"))
        count = len(_ids(graph, "t"))
        report = Threads(saver).prune("t", keep_last=count + 5)
        assert (report.deleted_checkpoints, report.kept) == (0, count)


@pytest.mark.parametrize("keep", [0, -1, True])
def test_keep_last_must_be_positive(keep: int) -> None:
    with open_checkpointer("memory://") as saver, pytest.raises(InvalidInputError):
        Threads(saver).prune("t", keep_last=keep)


@pytest.mark.postgres
def test_postgres_prune_removes_unreferenced_blobs(postgres_url: str) -> None:
    with open_checkpointer(postgres_url) as saver:
        graph = story_graph(saver)
        for turn in range(3):
            graph.invoke({"items": [f"turn {turn}"]}, cfg("t"))
        threads = Threads(saver)
        blobs_before = threads.sizes(["t"])[0].blobs
        report = threads.prune("t", keep_last=2)
        assert report.deleted_blobs > 0
        assert threads.sizes(["t"])[0].blobs == blobs_before - report.deleted_blobs
        assert graph.get_state(cfg("t")).values["items"][-4:] == ["turn 2", "a", "b", "c"]


async def test_async_prune_and_sizes(durable_url: str) -> None:
    from engram.stores.hot import AsyncThreads, aopen_checkpointer

    async with aopen_checkpointer(durable_url) as saver:
        graph = story_graph(saver)
        for turn in range(2):
            await graph.ainvoke({"items": [f"turn {turn}"]}, cfg("t"))
        threads = AsyncThreads(saver)
        growth = (await threads.sizes(["t"]))[0]
        report = await threads.prune("t", keep_last=2)
        assert report.kept == 2 and report.deleted_checkpoints == growth.checkpoints - 2
        state = await graph.aget_state(cfg("t"))
        assert state.values["items"][-4:] == ["turn 1", "a", "b", "c"]


def _namespaces(saver: Any, thread_id: str) -> set[str]:
    found = saver.list({"configurable": {"thread_id": thread_id}})
    return {t.config["configurable"]["checkpoint_ns"] for t in found}


def test_prune_drops_subgraph_calls_of_pruned_checkpoints(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = nested_graph(saver)
        for turn in range(3):
            graph.invoke({"items": [f"turn {turn}"]}, cfg("t"))
        assert len(_namespaces(saver, "t")) == 4
        kept_ids = _ids(graph, "t")[:2]
        before = {c: _snapshot(graph, "t", c) for c in kept_ids}
        Threads(saver).prune("t", keep_last=2)
        assert len(_namespaces(saver, "t")) == 2
        assert {c: _snapshot(graph, "t", c) for c in kept_ids} == before
        final = graph.invoke({"items": ["turn 3"]}, cfg("t"))
        assert final["items"][-4:] == ["turn 3", "pre", "s1", "s2"]


def test_prune_keeps_a_subgraph_paused_mid_call(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = nested_graph(saver, ask=True)
        for thread_id in ("t", "twin"):
            graph.invoke({"items": ["start"]}, cfg(thread_id))
        report = Threads(saver).prune("t", keep_last=1)
        assert report.deleted_checkpoints > 0
        paused = graph.get_state(cfg("t"), subgraphs=True)
        assert paused.next == ("sub",) and paused.tasks[0].state.next == ("s2",)
        final = graph.invoke(Command(resume="ok"), cfg("t"))
        assert final == graph.invoke(Command(resume="ok"), cfg("twin"))
        assert final["answer"] == "ok"


def test_deleting_a_run_leaves_no_checkpoint_pointing_at_a_deleted_one(hot_url: str) -> None:
    """As LangGraph's in-memory saver (and every prune): a kept checkpoint whose parent
    went with a deleted run becomes the first of its thread."""
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        first, second = "run-1", "run-2"
        graph.invoke({"items": ["one"]}, {"configurable": {"thread_id": "t", "run_id": first}})
        graph.invoke({"items": ["two"]}, {"configurable": {"thread_id": "t", "run_id": second}})
        saver.delete_for_runs([first])
        kept = list(saver.list(cfg("t")))
        ids = {t.config["configurable"]["checkpoint_id"] for t in kept}
        assert {t.metadata.get("run_id") for t in kept} == {second}
        parents = [
            t.parent_config["configurable"]["checkpoint_id"] for t in kept if t.parent_config
        ]
        assert set(parents) <= ids and len(parents) == len(kept) - 1
        assert graph.invoke({"items": ["three"]}, cfg("t"))["items"][-4:] == [
            "three",
            "a",
            "b",
            "c",
        ]


def test_copying_a_thread_onto_itself_changes_nothing(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, cfg("t"))
        before = [t.checkpoint for t in saver.list(cfg("t"))]
        saver.copy_thread("t", "t")
        assert [t.checkpoint for t in saver.list(cfg("t"))] == before


def test_run_ids_are_checked_before_anything_is_deleted(hot_url: str) -> None:
    """A bare string is not read as the runs its characters name ("r" and "1" here); an id
    no write could store is refused as every other id is; a UUID is its text."""
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        run = uuid.uuid4()
        graph.invoke({"items": ["one"]}, {"configurable": {"thread_id": "t", "run_id": "r"}})
        graph.invoke({"items": ["two"]}, {"configurable": {"thread_id": "t", "run_id": str(run)}})
        before = len(list(saver.list(cfg("t"))))
        for bad in ("r1", b"r", ["a\ud800b"], ["r", "x\ny"], 5):
            with pytest.raises(InvalidInputError, match="run"):
                saver.delete_for_runs(bad)  # type: ignore[arg-type]
        assert len(list(saver.list(cfg("t")))) == before
        saver.delete_for_runs([run])  # type: ignore[list-item]
        assert {t.metadata.get("run_id") for t in saver.list(cfg("t"))} == {"r"}
