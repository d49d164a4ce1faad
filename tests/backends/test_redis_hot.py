"""The Redis hot tier against a real ``redis-server``: what only Redis has.

Durability (SIGKILL of the server under ``appendfsync always``), the keys erasure
leaves (none of the user's), AOF compaction, encryption of what Redis persists,
per-thread TTL and how it meets thread ownership, the URL and the server version,
and an unreachable server. The shared hot-tier suites (``tests/hot``) run on Redis
through the ``hot_url`` fixture.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from hot_graphs import cfg, story_graph

from engram import BackendError, Principal
from engram.backends.redis import hot as redis_hot
from engram.cli import main
from engram.config import parse_url
from engram.errors import ConfigError, ConflictError
from engram.stores.hot import (
    AsyncThreads,
    Threads,
    aopen_checkpointer,
    generate_key,
    open_checkpointer,
    thread_config,
)
from redis_server import RedisServer, free_port

pytestmark = pytest.mark.redis

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
NAMESAKE = Principal("globex", "alice")
MARKER = "NARWHAL-REDIS-3307"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own (its files are this test's only)."""
    own = RedisServer(tmp_path / "redis").start()
    yield own
    own.stop()


def _keys(url: str) -> list[str]:
    with redis.Redis.from_url(url) as client:
        return sorted(k.decode() for k in client.scan_iter("*"))


def _fill(saver: Any) -> None:
    story_graph(saver).invoke({"items": [MARKER], "note": MARKER}, thread_config("a1", ALICE))
    story_graph(saver, ask=True).invoke({"items": [MARKER]}, thread_config("a2", ALICE))
    story_graph(saver).invoke({"items": ["bob"]}, thread_config("b1", BOB))
    story_graph(saver).invoke({"items": ["namesake"]}, thread_config("n1", NAMESAKE))


# --- erasure ----------------------------------------------------------------------


def test_erasing_a_user_leaves_no_key_of_their_threads(redis_url: str) -> None:
    with open_checkpointer(redis_url) as saver:
        _fill(saver)
        before = _keys(redis_url)
        assert any("{a1}" in k for k in before) and "engram:hot:u:acme:alice" in before
        assert sorted(Threads(saver).delete_user_threads(ALICE)) == ["a1", "a2"]
        after = _keys(redis_url)
        with redis.Redis.from_url(redis_url) as client:
            threads = {t.decode() for t in client.smembers("engram:hot:threads")}
    assert not [k for k in after if "{a1}" in k or "{a2}" in k or ":acme:alice" in k]
    assert threads == {"b1", "n1"}
    assert {k for k in before if "{b1}" in k or "{n1}" in k} <= set(after)


def test_an_expired_thread_id_taken_by_another_is_not_the_old_owners(redis_url: str) -> None:
    """With thread_ttl, Alice's thread can expire while her index still names it, and Bob
    can take the id: her sizes leave his thread out, and erasing her leaves no key naming
    her (nor his thread touched)."""
    with open_checkpointer(redis_url + "?thread_ttl=2") as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, thread_config("t1", ALICE))
        time.sleep(1.2)
        graph.invoke({"items": ["kept"]}, thread_config("keep", ALICE))
        time.sleep(1.2)  # t1 expired, 'keep' alive: Alice's index lives on, naming t1
        graph.invoke({"items": [MARKER]}, thread_config("t1", NAMESAKE))
        threads = Threads(saver)
        assert threads.owner("t1") == NAMESAKE
        assert {s.thread_id for s in threads.sizes(principal=ALICE)} == {"keep"}
        assert threads.delete_user_threads(ALICE) == ["keep"]
        assert not [k for k in _keys(redis_url) if "acme:alice" in k]
        assert MARKER in threads.get("t1", principal=NAMESAKE).checkpoint["channel_values"]["items"]


def test_compaction_rewrites_the_aof_without_the_erased_bytes(server: RedisServer) -> None:
    with open_checkpointer(server.url) as saver:
        _fill(saver)
        threads = Threads(saver)
        threads.delete_user_threads(ALICE)
        assert MARKER.encode() in server.persisted_bytes()  # the AOF logs what was deleted
        assert threads.compact() is True
        assert MARKER.encode() not in server.persisted_bytes()
        assert {t.thread_id for t in threads.list_threads()} == {"b1", "n1"}
        assert story_graph(saver).get_state(cfg("b1")).values["items"][0] == "bob"


def test_compaction_of_a_server_that_persists_nothing_is_false(tmp_path: Path) -> None:
    bare = RedisServer(tmp_path / "bare")
    bare.start()
    try:
        with redis.Redis(port=bare.port) as client:
            client.config_set("appendonly", "no")
        with open_checkpointer(bare.url) as saver:
            assert Threads(saver).compact() is False
    finally:
        bare.stop()


async def test_async_compaction(server: RedisServer) -> None:
    async with aopen_checkpointer(server.url) as saver:
        await story_graph(saver).ainvoke({"items": [MARKER]}, thread_config("a1", ALICE))
        threads = AsyncThreads(saver)
        assert await threads.delete_user_threads(ALICE) == ["a1"]
        assert await threads.compact() is True
    assert MARKER.encode() not in server.persisted_bytes()


# --- encryption at rest -------------------------------------------------------------


def test_what_redis_persists_is_sealed_with_a_key(server: RedisServer) -> None:
    with open_checkpointer(server.url, encryption_key=None) as saver:
        story_graph(saver).invoke({"items": [MARKER], "note": MARKER}, cfg("plain"))
    assert MARKER.encode() in server.persisted_bytes()
    with open_checkpointer(server.url) as saver:
        saver.delete_thread("plain")
        Threads(saver).compact()
    key = generate_key()
    with open_checkpointer(server.url, encryption_key=key) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": [MARKER], "note": MARKER}, cfg("sealed"))
        assert graph.get_state(cfg("sealed")).values["note"] == "after c"
    assert MARKER.encode() not in server.persisted_bytes()


# --- durability ---------------------------------------------------------------------

WRITER = """
import sys
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
from engram.errors import BackendError
from engram.stores.hot import open_checkpointer

class S(TypedDict):
    n: int

def tick(state):
    return {"n": state["n"] + 1}

builder = StateGraph(S)
builder.add_node("tick", tick)
builder.add_edge(START, "tick")
builder.add_conditional_edges("tick", lambda s: END if s["n"] >= int(sys.argv[2]) else "tick")
config = {"configurable": {"thread_id": "loop"}, "recursion_limit": 100000}
with open_checkpointer(sys.argv[1]) as saver:
    put = saver.put
    def acknowledged(*args):
        saved = put(*args)
        print(saved["configurable"]["checkpoint_id"], flush=True)
        return saved
    saver.put = acknowledged
    try:
        builder.compile(checkpointer=saver).invoke({"n": 0}, config, durability="sync")
    except BackendError as exc:
        print("error", exc, flush=True)
        sys.exit(3)
"""

STEPS = 400


def _loop_graph(saver: Any) -> Any:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    builder = StateGraph(S)
    builder.add_node("tick", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "tick")
    builder.add_conditional_edges("tick", lambda s: END if s["n"] >= STEPS else "tick")
    return builder.compile(checkpointer=saver)


def test_sigkill_of_redis_mid_run_loses_no_acknowledged_checkpoint(server: RedisServer) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, server.url, str(STEPS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    acked = [child.stdout.readline().strip() for _ in range(60)]
    server.kill()  # mid-run: the writer is still putting checkpoints
    rest, errors = child.communicate(timeout=120)
    lines = [*acked, *rest.splitlines()]
    assert child.returncode == 3, errors
    assert lines[-1].startswith("error Redis hot tier unavailable: ") and "\n" not in lines[-1]
    acked = lines[:-1]
    assert 60 <= len(acked) < STEPS

    server.start()  # the same files, the same port
    with open_checkpointer(server.url) as saver:
        stored = {
            t.config["configurable"]["checkpoint_id"]
            for t in saver.list({"configurable": {"thread_id": "loop"}})
        }
        assert set(acked) <= stored, f"lost {len(set(acked) - stored)} acknowledged checkpoints"
        assert len(stored) - len(acked) <= 1  # at most the one stored as the server died
        graph = _loop_graph(saver)
        resumed_from = graph.get_state(cfg("loop")).values["n"]
        assert resumed_from >= len(acked) - 2
        final = graph.invoke(None, {**cfg("loop"), "recursion_limit": 100000})
        assert final == {"n": STEPS}


# --- TTL and ownership ------------------------------------------------------------------


def _ttls(url: str, thread_id: str) -> list[int]:
    with redis.Redis.from_url(url.split("?")[0]) as client:
        names = [k for k in client.scan_iter("*") if f"{{{thread_id}}}".encode() in k]
        return [int(client.ttl(k)) for k in names]


def test_without_a_ttl_nothing_expires(redis_url: str) -> None:
    with open_checkpointer(redis_url) as saver:
        story_graph(saver).invoke({"items": ["x"]}, thread_config("t1", ALICE))
    ttls = _ttls(redis_url, "t1")
    assert ttls and set(ttls) == {-1}


def test_a_thread_ttl_covers_every_key_and_its_owner_and_then_frees_the_id(
    redis_url: str,
) -> None:
    url = redis_url + "?thread_ttl=2"
    with open_checkpointer(url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, thread_config("t1", ALICE))
        graph.invoke({"items": ["y"]}, thread_config("keep", BOB))
        ttls = _ttls(url, "t1")
        assert len(ttls) >= 6 and all(0 < t <= 2 for t in ttls)  # owner record included
        with pytest.raises(ConflictError):  # while it lives, the id is Alice's
            graph.invoke({"items": ["hijack"]}, thread_config("t1", BOB))
        threads = Threads(saver)
        assert [t.thread_id for t in threads.list_threads(ALICE)] == ["t1"]
        time.sleep(2.5)
        assert threads.list_threads(ALICE) == [] and threads.list_threads() == []
        assert _keys(url.split("?")[0]) == []  # the indexes were cleaned by the listing
        graph.invoke({"items": ["mine now"]}, thread_config("t1", BOB))
        assert threads.owner("t1") == BOB
        assert graph.get_state(cfg("t1")).values["items"][0] == "mine now"


def test_each_write_restarts_the_thread_ttl(redis_url: str) -> None:
    url = redis_url + "?thread_ttl=3"
    with open_checkpointer(url) as saver:
        graph = story_graph(saver)
        graph.invoke({"items": ["x"]}, thread_config("t1", ALICE))
        time.sleep(2)
        graph.invoke({"items": ["y"]}, thread_config("t1", ALICE))
        time.sleep(1.5)  # 3.5 s after the first write, 1.5 s after the last
        assert len(Threads(saver).history("t1", ALICE)) == 10
        assert min(_ttls(url, "t1")) >= 1


@pytest.mark.parametrize("bad", ["0", "-5", "soon", "1.5", ""])
def test_a_bad_thread_ttl_is_a_config_error(bad: str) -> None:
    with (
        pytest.raises(ConfigError, match="thread_ttl"),
        open_checkpointer(f"redis://127.0.0.1:1/0?thread_ttl={bad}"),
    ):
        pytest.fail("opened with a bad TTL")


def test_the_url_keeps_the_drivers_own_options() -> None:
    dsn, ttl = redis_hot.parse(parse_url("redis://:pw@h:7/3?thread_ttl=60&socket_timeout=2"))
    assert (dsn, ttl) == ("redis://:pw@h:7/3?socket_timeout=2", 60)


@pytest.mark.parametrize("version", ["5.0.14", "6.0.9", "garbage"])
def test_a_server_older_than_6_2_is_refused(version: str) -> None:
    with pytest.raises(ConfigError, match=r"6\.2"):
        redis_hot._check_version({"redis_version": version})


def test_redis_6_2_and_valkey_8_are_accepted() -> None:
    for version in ("6.2.0", "7.0.15", "8.0.2"):
        redis_hot._check_version({"redis_version": version})


# --- an unreachable server -------------------------------------------------------------


@pytest.fixture
def closed_url() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def test_a_closed_port_is_a_backend_error(closed_url: str) -> None:
    with pytest.raises(BackendError, match=r"^Redis hot tier unavailable: "):  # noqa: SIM117
        with open_checkpointer(closed_url):
            pytest.fail("opened a saver on a closed port")


async def test_the_async_saver_on_a_closed_port_is_a_backend_error(closed_url: str) -> None:
    with pytest.raises(BackendError, match=r"^Redis hot tier unavailable: "):
        async with aopen_checkpointer(closed_url):
            pytest.fail("opened a saver on a closed port")


def test_the_cli_says_so_in_one_line(closed_url: str) -> None:
    result = CliRunner().invoke(main, ["threads", "list-threads", "--url", closed_url])
    assert result.exit_code == 1
    assert result.output.startswith("Error: BackendError: Redis hot tier unavailable: ")
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


# --- the memory layer and the agent on Redis ------------------------------------------


def test_memory_open_takes_a_redis_hot_url(tmp_path: Path, server: RedisServer) -> None:
    from engram import Memory
    from engram.recall import HashEmbedder

    with Memory.open(tmp_path / "home", hot_url=server.url, embedder=HashEmbedder()) as memory:
        assert type(memory.checkpointer).__name__ == "RedisSaver"
        story_graph(memory.checkpointer).invoke({"items": [MARKER]}, thread_config("a1", ALICE))
        story_graph(memory.checkpointer).invoke({"items": ["b"]}, thread_config("b1", BOB))
        assert list(memory.threads(ALICE)) == ["a1"]
        report = memory.forget(ALICE)
        assert report.threads == ("a1",) and report.hot_compacted is True
    assert not (tmp_path / "home" / "checkpoints.db").exists()  # the hot tier is on Redis
    assert not [k for k in _keys(server.url) if "{a1}" in k or ":alice" in k]
    assert MARKER.encode() not in server.persisted_bytes()


async def test_async_memory_open_takes_a_redis_hot_url(tmp_path: Path, redis_url: str) -> None:
    from engram import AsyncMemory
    from engram.recall import HashEmbedder

    memory = await AsyncMemory.open(tmp_path / "home", hot_url=redis_url, embedder=HashEmbedder())
    try:
        assert type(memory.sync.checkpointer).__name__ == "RedisSaver"
    finally:
        await memory.close()


def _hold_then_kill_redis(server: RedisServer, home: Path, tmp_path: Path, point: str) -> list[str]:
    """Run the agent with a hold at ``point``; there SIGKILL redis-server, then the agent.
    Returns the checkpoint ids the agent had stored (read before the kill)."""
    from analyst_support import PRINCIPAL, REQUEST, child_env, cli_args

    from engram.agent import MarketAnalyst

    marker = tmp_path / f"hold-{point}"
    env = child_env(ENGRAM_AGENT_HOLD=point, ENGRAM_AGENT_HOLD_FILE=str(marker))
    args = cli_args(home, "run", REQUEST, "--thread", "t1", "--hot-url", server.url, "--no-memory")
    child = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None and time.monotonic() < deadline, "never reached the hold"
            time.sleep(0.05)
        analyst = MarketAnalyst(home=home, hot_url=server.url)
        stored = [h.checkpoint_id for h in analyst.history(PRINCIPAL, "t1")]
        server.kill()
    finally:
        child.kill()
        child.wait(timeout=30)
    return stored


def test_the_agent_resumes_after_redis_is_killed_mid_run_and_restarted(
    server: RedisServer, tmp_path: Path
) -> None:
    from analyst_support import PRINCIPAL, REQUEST

    from engram.agent import MarketAnalyst

    reference = MarketAnalyst(home=tmp_path / "reference").run(PRINCIPAL, REQUEST, thread_id="r")
    home = tmp_path / "home"
    stored = _hold_then_kill_redis(server, home, tmp_path, "tool:3")
    assert stored  # the run had checkpoints on Redis when the server died
    server.start()
    analyst = MarketAnalyst(home=home, hot_url=server.url)
    crashed = analyst.status(PRINCIPAL, "t1")
    assert crashed.stage == "interrupted" and crashed.tool_calls == 3
    assert [h.checkpoint_id for h in analyst.history(PRINCIPAL, "t1")] == stored
    resumed = analyst.resume(PRINCIPAL, "t1")
    assert resumed.stage == "awaiting_approval" and resumed.draft == reference.draft
    assert not (home / "checkpoints.db").exists()


def test_rediss_urls_name_the_redis_backend_over_tls() -> None:
    parsed = parse_url("rediss://:pw@cache.example:6380/2?thread_ttl=5")
    assert parsed.scheme == "redis"
    assert redis_hot.parse(parsed) == ("rediss://:pw@cache.example:6380/2", 5)


async def test_a_sync_opened_saver_says_how_to_get_an_async_one(redis_url: str) -> None:
    with open_checkpointer(redis_url) as saver:
        with pytest.raises(ConfigError, match="aopen_checkpointer"):
            await saver.aget_tuple(cfg("t1"))
        assert saver.get_tuple(cfg("t1")) is None


async def test_an_async_opened_saver_serves_sync_callers_too(redis_url: str) -> None:
    async with aopen_checkpointer(redis_url) as saver:
        await story_graph(saver).ainvoke({"items": ["x"]}, thread_config("t1", ALICE))
        assert story_graph(saver).get_state(cfg("t1")).values["items"] == ["x", "a", "b", "c"]
        assert Threads(saver).owner("t1") == ALICE


LOOKALIKES = ["a:b", "a%3Ab", "{a}b", "a}b{", "a b", "ä:b", "A:b", "a:b "]


def test_thread_ids_that_encode_alike_stay_apart(redis_url: str) -> None:
    with open_checkpointer(redis_url) as saver:
        graph = story_graph(saver)
        for i, thread_id in enumerate(LOOKALIKES):
            graph.invoke({"items": [f"v{i}"]}, thread_config(thread_id, Principal("acme", f"u{i}")))
        threads = Threads(saver)
        for i, thread_id in enumerate(LOOKALIKES):
            assert graph.get_state(cfg(thread_id)).values["items"][0] == f"v{i}"
            assert threads.owner(thread_id) == Principal("acme", f"u{i}")
        saver.delete_thread("a:b")
        assert graph.get_state(cfg("a:b")).values == {}
        left = {t.thread_id for t in threads.list_threads()}
        assert left == set(LOOKALIKES) - {"a:b"}
        assert all(len(threads.history(t)) == 5 for t in left)
