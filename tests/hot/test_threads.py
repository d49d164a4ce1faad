"""Inspection and time travel: per-user listing, history, diff, fork, owner checks."""

from __future__ import annotations

from typing import Any

import pytest
from hot_graphs import cfg, story_graph

from engram import Principal
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.stores.hot import (
    FORKED_FROM_KEY,
    AsyncThreads,
    Threads,
    aopen_checkpointer,
    open_checkpointer,
    thread_config,
)

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
EVE = Principal("other", "alice")


def _run(graph: Any, thread_id: str, principal: Principal, item: str = "x") -> None:
    graph.invoke({"items": [item]}, thread_config(thread_id, principal))


def test_listing_is_per_user(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "a1", ALICE)
        _run(graph, "b1", BOB)
        _run(graph, "a2", ALICE)
        _run(graph, "e1", EVE)
        threads = Threads(saver)
        mine = threads.list_threads(ALICE)
        assert [t.thread_id for t in mine] == ["a2", "a1"]
        assert all((t.tenant_id, t.user_id) == ("acme", "alice") for t in mine)
        assert [t.thread_id for t in threads.list_threads(BOB)] == ["b1"]
        assert [t.thread_id for t in threads.list_threads(EVE)] == ["e1"]
        assert {t.thread_id for t in threads.list_threads()} == {"a1", "a2", "b1", "e1"}
        assert mine[0].checkpoints == 5 and mine[0].updated_at is not None


def test_other_users_threads_are_off_limits(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "b1", BOB)
        threads = Threads(saver)
        threads.check_owner(BOB, "b1")
        threads.check_owner(ALICE, "brand-new-thread")
        last = threads.history("b1")[-1].checkpoint_id
        for thread_id in ("b1", "no-such-thread"):  # Bob's thread reads as a missing one
            for call in (
                lambda t=thread_id: threads.history(t, ALICE),
                lambda t=thread_id: threads.get(t, last, ALICE),
                lambda t=thread_id: threads.prune(t, 1, ALICE),
                lambda t=thread_id: threads.fork(t, last, principal=ALICE),
            ):
                with pytest.raises(NotFoundError, match=f"^no thread '{thread_id}'$"):
                    call()
        with pytest.raises(ConflictError, match="'b1' is already in use"):
            threads.check_owner(ALICE, "b1")  # what the saver answers to Alice's write
        assert len(threads.history("b1", BOB)) == 5


def test_history_is_newest_first_with_steps(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t", ALICE)
        history = Threads(saver).history("t", ALICE)
    assert [h.step for h in history] == [3, 2, 1, 0, -1]
    assert [h.source for h in history] == ["loop"] * 4 + ["input"]
    assert history[0].parent_id == history[1].checkpoint_id and history[-1].parent_id is None
    assert "items" in history[0].channels


def test_diff_shows_added_and_changed_channels(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t", ALICE, item="start")
        threads = Threads(saver)
        history = threads.history("t")
        diff = threads.diff("t", history[2].checkpoint_id, history[0].checkpoint_id)
    assert not diff.added and not diff.removed
    changes = {c.channel: (c.before, c.after) for c in diff.changed}
    assert changes["items"] == (["start", "a"], ["start", "a", "b", "c"])
    assert changes["note"] == ("after a", "after c")
    rendered = diff.render()
    assert "~ items: appended 2 item(s): ['b', 'c']" in rendered
    assert "~ note: 'after a' -> 'after c'" in rendered


def test_diff_from_the_input_checkpoint_shows_added_keys(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t", ALICE, item="start")
        threads = Threads(saver)
        diff = threads.diff("t", threads.history("t")[-1].checkpoint_id)
    assert set(diff.added) == {"items", "note"}
    assert diff.render().splitlines()[1].startswith("+ items: ")


def test_fork_continues_independently(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t", ALICE, item="start")
        threads = Threads(saver)
        history = threads.history("t")
        after_a = history[2].checkpoint_id
        original = graph.get_state(cfg("t")).values
        fork = threads.fork("t", after_a, "t-fork", ALICE)
        assert fork.thread_id == "t-fork" and fork.checkpoint_id == after_a
        forked = graph.get_state(cfg("t-fork", after_a))
        assert forked.values == graph.get_state(cfg("t", after_a)).values
        assert forked.values == {"items": ["start", "a"], "note": "after a"}
        assert forked.next == ("b",)
        assert forked.metadata[FORKED_FROM_KEY] == f"t#{after_a}"
        assert graph.invoke(None, fork.config)["items"] == ["start", "a", "b", "c"]
        graph.invoke({"items": ["fork only"]}, thread_config("t-fork", ALICE))
        assert graph.get_state(cfg("t")).values == original
        assert [h.checkpoint_id for h in threads.history("t")] == [h.checkpoint_id for h in history]
        assert "t-fork" in {t.thread_id for t in threads.list_threads(ALICE)}
        assert "t-fork" not in {t.thread_id for t in threads.list_threads(BOB)}


def test_fork_of_a_paused_thread_keeps_the_interrupt(hot_url: str) -> None:
    from langgraph.types import Command

    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver, ask=True)
        graph.invoke({"items": ["start"]}, thread_config("t", ALICE))
        threads = Threads(saver)
        fork = threads.fork("t", threads.history("t")[0].checkpoint_id, principal=ALICE)
        assert fork.thread_id.startswith("t-fork-")
        assert graph.invoke(Command(resume="no"), fork.config)["answer"] == "no"
        assert graph.invoke(Command(resume="yes"), cfg("t"))["answer"] == "yes"


def test_fork_refuses_an_existing_target_and_missing_checkpoints(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t", ALICE)
        _run(graph, "u", ALICE)
        threads = Threads(saver)
        with pytest.raises(ConflictError):
            threads.fork("t", threads.history("t")[0].checkpoint_id, "u")
        with pytest.raises(NotFoundError):
            threads.fork("t", "1f0000000-0000-6000-8000-000000000000", "v")
        with pytest.raises(NotFoundError):
            threads.history("nope", ALICE)


def test_sizes_grow_with_each_turn(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        threads = Threads(saver)
        seen = []
        for turn in range(3):
            _run(graph, "t", ALICE, item=f"turn {turn} " + "x" * 200)
            seen.append(threads.sizes(["t"], ALICE)[0])
        assert [s.checkpoints for s in seen] == [5, 10, 15]
        assert seen[0].total_bytes < seen[1].total_bytes < seen[2].total_bytes
        assert threads.sizes(principal=BOB) == []


async def test_async_threads_api(durable_url: str) -> None:
    async with aopen_checkpointer(durable_url) as saver:
        graph = story_graph(saver)
        await graph.ainvoke({"items": ["x"]}, thread_config("t", ALICE))
        threads = AsyncThreads(saver)
        assert [t.thread_id for t in await threads.list_threads(ALICE)] == ["t"]
        assert await threads.list_threads(BOB) == []
        history = await threads.history("t", ALICE)
        diff = await threads.diff("t", history[-1].checkpoint_id, principal=ALICE)
        assert set(diff.added) == {"items", "note"}
        fork = await threads.fork("t", history[2].checkpoint_id, "t2", ALICE)
        assert (await graph.ainvoke(None, fork.config))["items"] == ["x", "a", "b", "c"]
        with pytest.raises(ConflictError):
            await threads.check_owner(BOB, "t2")


BAD_LIMITS = [-1, "2", 1.5, True, None.__class__, 2**70]


@pytest.mark.parametrize("limit", BAD_LIMITS)
def test_history_limit_is_a_count_on_every_backend(hot_url: str, limit: Any) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t", ALICE)
        threads = Threads(saver)
        with pytest.raises(InvalidInputError, match="limit"):
            threads.history("t", ALICE, limit=limit)
        assert threads.history("t", ALICE, limit=0) == []
        assert [len(threads.history("t", limit=n)) for n in (1, 2, 99, None)] == [1, 2, 5, 5]


async def test_async_history_limit_is_a_count(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        await story_graph(saver).ainvoke({"items": ["x"]}, thread_config("t", ALICE))
        threads = AsyncThreads(saver)
        for limit in BAD_LIMITS:
            with pytest.raises(InvalidInputError, match="limit"):
                await threads.history("t", ALICE, limit=limit)
        assert await threads.history("t", ALICE, limit=0) == []
        assert len(await threads.history("t", ALICE, limit=2)) == 2
