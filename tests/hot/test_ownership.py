"""A thread belongs to the principal of its first checkpoint, for good.

The adversary is another principal writing on the same thread id: an application that
forgets ``check_owner``, or two users who chose the same id. Every backend, sync and async.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hot_graphs import story_graph
from langgraph.checkpoint.sqlite import SqliteSaver

from engram import Principal
from engram.errors import ConflictError, NotFoundError
from engram.stores.hot import (
    AsyncThreads,
    Threads,
    aopen_checkpointer,
    open_checkpointer,
    thread_config,
)

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
MALLORY = Principal("evil", "alice")  # another tenant, the same user id


def _run(graph: Any, thread_id: str, principal: Principal | None, item: str = "x") -> Any:
    config = thread_config(thread_id, principal)
    return graph.invoke({"items": [item]}, config)


@pytest.mark.parametrize("intruder", [BOB, MALLORY])
def test_a_write_by_another_principal_is_refused_before_it_is_stored(
    hot_url: str, intruder: Principal
) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t1", ALICE)
        threads = Threads(saver)
        before = threads.history("t1", ALICE)
        with pytest.raises(ConflictError, match="'t1' is already in use"):
            _run(graph, "t1", intruder, "hijack")
        # metadata naming the intruder (LangGraph copies config metadata into checkpoints)
        hijack = {
            "configurable": {"thread_id": "t1"},
            "metadata": dict(zip(("tenant_id", "user_id"), intruder.namespace, strict=True)),
        }
        with pytest.raises(ConflictError):
            graph.invoke({"items": ["hijack"]}, hijack)
        with pytest.raises(ConflictError):  # a pending write on the latest checkpoint
            saver.put_writes(
                thread_config("t1", intruder, checkpoint_id=before[0].checkpoint_id),
                [("items", ["hijack"])],
                "task-1",
            )
        after = threads.history("t1", ALICE)
        assert [c.checkpoint_id for c in after] == [c.checkpoint_id for c in before]
        assert (
            "hijack" not in threads.get("t1", principal=ALICE).checkpoint["channel_values"]["items"]
        )
        assert threads.owner("t1") == ALICE
        assert [t.thread_id for t in threads.list_threads(intruder)] == []
        assert threads.delete_user_threads(intruder) == []
        assert [t.thread_id for t in threads.list_threads(ALICE)] == ["t1"]
        _run(graph, "t1", ALICE, "more")  # the owner is never locked out
        assert len(threads.history("t1", ALICE)) > len(before)


def test_unscoped_writes_are_the_applications_and_keep_the_owner(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t1", ALICE)
        _run(graph, "t1", None, "admin")
        threads = Threads(saver)
        assert threads.owner("t1") == ALICE
        assert [t.thread_id for t in threads.list_threads(ALICE)] == ["t1"]
        assert threads.list_threads(ALICE)[0].user_id == "alice"


def test_another_users_thread_reads_exactly_as_a_missing_one(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t1", ALICE)
        threads = Threads(saver)
        answers = []
        for thread_id in ("t1", "never-made"):
            for call in (
                lambda t=thread_id: threads.get(t, principal=BOB),
                lambda t=thread_id: threads.get(t, "1ef-0000", principal=BOB),
                lambda t=thread_id: threads.history(t, BOB),
                lambda t=thread_id: threads.diff(t, "1ef-0000", principal=BOB),
                lambda t=thread_id: threads.prune(t, 1, BOB),
                lambda t=thread_id: threads.fork(t, "1ef-0000", principal=BOB),
            ):
                with pytest.raises(NotFoundError) as caught:
                    call()
                answers.append(str(caught.value).replace(thread_id, "<id>"))
        half = len(answers) // 2
        assert answers[:half] == answers[half:]


def test_fork_onto_a_taken_id_gives_one_answer_whoever_holds_it(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "a1", ALICE)
        _run(graph, "a2", ALICE)
        _run(graph, "b1", BOB)
        threads = Threads(saver)
        first = threads.history("a1", ALICE)[-1].checkpoint_id
        messages = []
        for target in ("a2", "b1"):  # Alice's own thread, then Bob's
            with pytest.raises(ConflictError) as caught:
                threads.fork("a1", first, target, ALICE)
            messages.append(str(caught.value).replace(target, "<id>"))
        assert messages[0] == messages[1]
        assert threads.owner("b1") == BOB and len(threads.history("b1", BOB)) == 5


def test_a_fork_belongs_to_who_forked_it(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _run(story_graph(saver), "t1", ALICE)
        threads = Threads(saver)
        first = threads.history("t1", ALICE)[-1].checkpoint_id
        fork = threads.fork("t1", first, "t1-copy", ALICE)
        assert threads.owner(fork.thread_id) == ALICE
        with pytest.raises(ConflictError):
            story_graph(saver).invoke({"items": ["hijack"]}, thread_config("t1-copy", BOB))
        assert saver.get_tuple(thread_config("t1-copy", BOB)) is None  # nothing to resume


async def test_async_savers_refuse_the_same_writes(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        await graph.ainvoke({"items": ["x"]}, thread_config("t1", ALICE))
        with pytest.raises(ConflictError):
            await graph.ainvoke({"items": ["hijack"]}, thread_config("t1", BOB))
        threads = AsyncThreads(saver)
        assert await threads.owner("t1") == ALICE
        assert [t.thread_id for t in await threads.list_threads(BOB)] == []
        with pytest.raises(NotFoundError):
            await threads.history("t1", BOB)
        assert await threads.delete_user_threads(BOB) == []
        assert len(await threads.history("t1", ALICE)) == 5


CLAIM = """
import sys, time
from pathlib import Path
sys.path.insert(0, {here!r})
from hot_graphs import story_graph
from engram import Principal
from engram.errors import ConflictError
from engram.stores.hot import open_checkpointer, thread_config
go, user = Path({go!r}), sys.argv[1]
while not go.exists():
    time.sleep(0.005)
with open_checkpointer({url!r}) as saver:
    config = thread_config("contested", Principal("acme", user))
    try:
        story_graph(saver).invoke({{"items": [user]}}, config)
        print("stored")
    except ConflictError:
        print("refused")
"""


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_processes_racing_to_create_one_id_leave_one_owner(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    sqlite = f"sqlite:///{tmp_path / 'hot.db'}"
    url = sqlite if backend == "sqlite" else str(request.getfixturevalue("redis_url"))
    go = tmp_path / "go"
    with open_checkpointer(url):
        pass  # the schema exists before the race
    code = CLAIM.format(here=str(Path(__file__).parent), go=str(go), url=url)
    racers = [
        subprocess.Popen([sys.executable, "-c", code, f"u{i}"], stdout=subprocess.PIPE, text=True)
        for i in range(8)
    ]
    go.touch()
    outcomes = [r.communicate(timeout=120)[0].strip() for r in racers]
    assert sorted(outcomes) == ["refused"] * 7 + ["stored"]
    with open_checkpointer(url) as saver:
        threads = Threads(saver)
        owner = threads.owner("contested")
        assert owner is not None
        state = threads.get("contested", principal=owner).checkpoint["channel_values"]
        assert state["items"] == [owner.user_id, "a", "b", "c"]  # only the owner's writes


def test_threads_written_before_owners_were_recorded_keep_their_first_owner(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hot.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        plain = SqliteSaver(conn)  # LangGraph's own saver: no owner guard
        graph = story_graph(plain)
        _run(graph, "old", ALICE)
        _run(graph, "old", BOB, "hijack")  # the latest checkpoint now names Bob
    with open_checkpointer(f"sqlite:///{path}") as saver:
        threads = Threads(saver)
        assert threads.owner("old") == ALICE
        assert [t.thread_id for t in threads.list_threads(ALICE)] == ["old"]
        assert threads.list_threads(BOB) == []
        with pytest.raises(ConflictError):
            _run(story_graph(saver), "old", BOB)


@pytest.mark.parametrize("intruder", [BOB, MALLORY])
def test_a_read_by_another_principal_finds_no_thread(hot_url: str, intruder: Principal) -> None:
    """What a write is refused, a read does not get either: another principal's
    ``get_state``, ``get_tuple`` and ``list`` see no thread, as for an id never used."""
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t1", ALICE, "ALICE-SECRET")
        assert graph.get_state(thread_config("t1", intruder)).values == {}
        assert saver.get_tuple(thread_config("t1", intruder)) is None
        assert list(saver.list(thread_config("t1", intruder))) == []
        assert "ALICE-SECRET" in graph.get_state(thread_config("t1", ALICE)).values["items"]
        assert saver.get_tuple(thread_config("t1")) is not None  # the application's own read
        assert len(list(saver.list(thread_config("t1", ALICE)))) > 0


async def test_an_async_read_by_another_principal_finds_no_thread(hot_url: str) -> None:
    async with aopen_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        await graph.ainvoke({"items": ["ALICE-SECRET"]}, thread_config("t1", ALICE))
        for intruder in (BOB, MALLORY):
            assert (await graph.aget_state(thread_config("t1", intruder))).values == {}
            assert await saver.aget_tuple(thread_config("t1", intruder)) is None
            assert [t async for t in saver.alist(thread_config("t1", intruder))] == []
        assert await saver.aget_tuple(thread_config("t1", ALICE)) is not None


def test_an_unscoped_fork_belongs_to_the_owner_of_its_source(hot_url: str) -> None:
    """The application's own write on Alice's thread names no one, and neither does a
    fork from it (the CLI without --tenant): the fork is still Alice's, not everyone's."""
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        _run(graph, "t-alice", ALICE, "alice-secret")
        _run(graph, "t-bob", BOB)
        graph.update_state({"configurable": {"thread_id": "t-alice"}}, {"note": "by the app"})
        threads = Threads(saver)
        latest = threads.history("t-alice")[0].checkpoint_id
        fork = threads.fork("t-alice", latest, "t-copy")
        assert threads.owner("t-copy") == ALICE
        assert (fork.tenant_id, fork.user_id) == ALICE.namespace
        assert saver.get_tuple(thread_config("t-copy", BOB)) is None
        assert [t.thread_id for t in threads.list_threads(BOB)] == ["t-bob"]
        with pytest.raises(ConflictError):
            _run(graph, "t-copy", BOB, "hijack")
        assert graph.get_state(fork.config).values["items"][0] == "alice-secret"
