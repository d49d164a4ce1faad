"""PostgreSQL as the application role: row-level security shows a thread only to its
tenant, so a config without one reads nothing. The configs the saver hands back keep
the principal (LangGraph's time-travel idiom works), a call that names no tenant and
finds none in scope says so instead of doing nothing, and setups racing on a fresh
database queue instead of deadlocking.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hot_graphs import story_graph

from engram import Principal, tenant_scope
from engram.config import AppRole
from engram.errors import BackendError, ConfigError
from engram.stores.hot import (
    Threads,
    aopen_checkpointer,
    open_checkpointer,
    setup_checkpointer,
    thread_config,
)

pytestmark = pytest.mark.postgres

ROLE = AppRole("engram_hot_test_app", "hot-test-secret")
ALICE = Principal("acme", "alice")


@pytest.fixture
def app_url(postgres_url: str) -> str:
    return setup_checkpointer(postgres_url, ROLE)


def _items(graph: Any, config: Any) -> list[str]:
    return list(graph.get_state(config).values.get("items", []))


def test_langgraphs_time_travel_idiom_works_as_the_application_role(app_url: str) -> None:
    with open_checkpointer(app_url, encryption_key=None) as saver:
        graph = story_graph(saver)
        config = thread_config("t1", ALICE)
        graph.invoke({"items": ["start"]}, config)
        mid = list(graph.get_state_history(config))[2]  # after "a"
        assert _items(graph, mid.config) == ["start", "a"]
        assert graph.invoke(None, mid.config)["items"] == ["start", "a", "b", "c"]
        edited = graph.update_state(mid.config, {"items": ["edit"]})
        assert graph.invoke(None, edited)["items"] == ["start", "a", "edit", "b", "c"]
        found = saver.get_tuple(config)
        assert found is not None and found.parent_config is not None
        assert _items(graph, found.parent_config) == ["start", "a", "edit", "b"]
        fork = Threads(saver).fork("t1", mid.config["configurable"]["checkpoint_id"], "t2", ALICE)
        assert graph.invoke(None, fork.config)["items"] == ["start", "a", "b", "c"]


def test_deleting_a_thread_with_no_tenant_in_scope_is_refused(app_url: str) -> None:
    with open_checkpointer(app_url, encryption_key=None) as saver:
        graph = story_graph(saver)
        config = thread_config("t1", ALICE)
        graph.invoke({"items": ["start"]}, config)
        for call in (
            lambda: saver.delete_thread("t1"),
            lambda: saver.prune(["t1"], strategy="delete"),
            lambda: saver.prune(["t1"]),
            lambda: saver.copy_thread("t1", "t1-copy"),
            lambda: saver.delete_for_runs(["run-1"]),
        ):
            with pytest.raises(ConfigError, match="tenant"):
                call()
        assert len(list(graph.get_state_history(config))) == 5  # nothing was touched
        with tenant_scope(ALICE.tenant_id):
            saver.delete_thread("t1")
        assert _items(graph, config) == []


async def test_async_deleting_a_thread_with_no_tenant_in_scope_is_refused(app_url: str) -> None:
    async with aopen_checkpointer(app_url, encryption_key=None) as saver:
        graph = story_graph(saver)
        config = thread_config("t1", ALICE)
        await graph.ainvoke({"items": ["start"]}, config)
        with pytest.raises(ConfigError, match="tenant"):
            await saver.adelete_thread("t1")
        assert (await graph.aget_state(config)).values["items"][-1] == "c"
        with tenant_scope(ALICE.tenant_id):
            await saver.adelete_thread("t1")
        assert (await graph.aget_state(config)).values == {}


SETUP = """
import sys, time
from pathlib import Path
from engram.stores.hot import setup_checkpointer
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.005)
try:
    setup_checkpointer(sys.argv[2])
    print("ok")
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_setups_racing_on_a_fresh_database_take_turns(postgres_url: str, tmp_path: Path) -> None:
    """Three processes set the schema up at once (LangGraph's migrations build indexes
    CONCURRENTLY, which waits for every older snapshot): all succeed, none deadlocks."""
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", SETUP, str(go), postgres_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    go.touch()
    outcomes = [r.communicate(timeout=180)[0].strip() for r in racers]
    assert outcomes == ["ok"] * 3
    with open_checkpointer(setup_checkpointer(postgres_url), encryption_key=None) as saver:
        done = story_graph(saver).invoke({"items": ["x"]}, thread_config("t1", ALICE))
        assert done["items"] == ["x", "a", "b", "c"]


def test_a_setup_gives_up_when_another_holds_the_lock_too_long(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.backends.postgres import hot

    monkeypatch.setattr(hot, "SETUP_LOCK_TIMEOUT", 0.5)
    with psycopg.connect(postgres_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtext('engram_hot_langgraph_setup'))")
        started = time.monotonic()
        with pytest.raises(BackendError, match="another setup held its lock for more than"):
            setup_checkpointer(postgres_url)
        assert time.monotonic() - started < 30
    assert setup_checkpointer(postgres_url).startswith("postgresql://")  # its turn came
