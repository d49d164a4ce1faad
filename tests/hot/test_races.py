"""A write racing the erasure of its user, with the interleaving forced, not hoped for.

A saver claims a thread's owner, then stores; an erasure (``delete_user_threads``) may land
in between, or after the store. Either way no checkpoint or pending write is left stored
without its owner recorded: one stored after the erasure is its writer's, one stored
before is erased.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis
from hot_graphs import cfg, story_graph
from langgraph.checkpoint.base.id import uuid6

from engram import ConflictError, Principal
from engram.stores.hot import Threads, open_checkpointer, thread_config
from engram.stores.hot.owned import OwnedSaver

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")


def _erase_first(
    monkeypatch: pytest.MonkeyPatch, step: str, threads: Threads, when: Callable[..., bool]
) -> list[list[str]]:
    """Run ``delete_user_threads(ALICE)`` once, just before ``OwnedSaver.<step>`` returns
    (``admit``: between the owner claim and the store) or starts (``settle``: after it)."""
    original, erased = getattr(OwnedSaver, step), []

    def erase() -> None:
        erased.append([])  # (first: the erasure may write through the same saver)
        erased[0] = threads.delete_user_threads(ALICE)

    def racing(saver: Any, *args: Any) -> Any:
        if step == "settle" and when(*args) and not erased:
            erase()
        found = original(saver, *args)
        if step == "admit" and when(*args) and not erased:
            erase()
        return found

    monkeypatch.setattr(OwnedSaver, step, racing)
    return erased


def _is_put(config: Any, metadata: Any) -> bool:
    return metadata is not None


def test_a_checkpoint_stored_after_its_users_erasure_is_its_writers(
    hot_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["alice-secret"]}, thread_config("t1", ALICE))
        threads = Threads(saver)
        erased = _erase_first(monkeypatch, "admit", threads, _is_put)
        graph.update_state(thread_config("t1", ALICE), {"note": "alice's last write"})
        monkeypatch.undo()
        assert erased == [["t1"]]
        assert threads.owner("t1") == ALICE
        assert saver.get_tuple(thread_config("t1", BOB)) is None
        assert threads.delete_user_threads(ALICE) == ["t1"]
        assert threads.owner("t1") is None and saver.get_tuple(cfg("t1")) is None


def test_pending_writes_stored_after_their_users_erasure_are_their_writers(
    hot_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["alice-secret"]}, thread_config("t1", ALICE))
        threads = Threads(saver)
        at = saver.get_tuple(thread_config("t1", ALICE)).config
        erased = _erase_first(monkeypatch, "admit", threads, lambda c, m: m is None)
        saver.put_writes(at, [("note", "alice-secret")], "task-1")
        monkeypatch.undo()
        assert erased == [["t1"]]
        assert threads.owner("t1") == ALICE
        with pytest.raises(ConflictError, match="already in use"):
            saver.put_writes({**at, "configurable": {**at["configurable"], **_bob()}}, [], "x")
        threads.delete_user_threads(ALICE)
        assert threads.owner("t1") is None


def _bob() -> dict[str, str]:
    return {"tenant_id": BOB.tenant_id, "user_id": BOB.user_id}


def test_a_checkpoint_stored_before_its_users_erasure_is_erased(
    hot_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_checkpointer(hot_url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["alice-secret"]}, thread_config("t1", ALICE))
        threads = Threads(saver)
        latest = saver.get_tuple(thread_config("t1", ALICE))
        erased = _erase_first(monkeypatch, "settle", threads, lambda config, writer: True)
        checkpoint = {**latest.checkpoint, "id": str(uuid6())}
        saver.put(latest.config, checkpoint, {"source": "update", "step": 9}, {})
        monkeypatch.undo()
        assert erased == [["t1"]]
        assert threads.owner("t1") is None
        assert threads.list_threads() == []
        assert saver.get_tuple(cfg("t1")) is None


@pytest.mark.redis
def test_redis_prune_racing_an_erasure_leaves_no_key(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.backends.redis import hot as redis_hot

    with open_checkpointer(redis_url) as saver:
        story_graph(saver).invoke({"items": ["alice-secret"]}, thread_config("t1", ALICE))
        threads = Threads(saver)
        execute, erased = redis_hot._execute, []

        def racing(client: Any, scripts: Any, command: str, args: Any) -> Any:
            if command == "MULTI" and not erased:  # prune read the thread; it writes now
                erased.append([])
                erased[0] = threads.delete_user_threads(ALICE)
            return execute(client, scripts, command, args)

        monkeypatch.setattr(redis_hot, "_execute", racing)
        threads.prune("t1", keep_last=1)
        monkeypatch.undo()
        assert erased == [["t1"]]
        assert redis.Redis.from_url(redis_url).keys("*") == []
