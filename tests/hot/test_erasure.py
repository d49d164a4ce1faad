"""Erasure in the hot tier: a user's threads go whole, and compaction leaves no byte behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from hot_graphs import nested_graph, story_graph

from engram import Principal
from engram.errors import InvalidInputError, NotFoundError
from engram.stores.hot import AsyncThreads, Threads, aopen_checkpointer, open_checkpointer
from engram.stores.hot import thread_config as config

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
NAMESAKE = Principal("globex", "alice")

MARKER = "QUOKKA-ERASE-5531"
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _fill(saver: Any) -> None:
    """Alice: a finished thread, one paused with pending writes, one with a subgraph call."""
    story_graph(saver).invoke({"items": [MARKER], "note": MARKER}, config("a1", ALICE))
    story_graph(saver, ask=True).invoke({"items": [MARKER]}, config("a2", ALICE))
    nested_graph(saver).invoke({"items": [MARKER]}, config("a3", ALICE))
    story_graph(saver).invoke({"items": ["bob"]}, config("b1", BOB))
    story_graph(saver).invoke({"items": ["namesake"]}, config("n1", NAMESAKE))


def _raw_sqlite(db: Path) -> bytes:
    files = (db, Path(f"{db}-wal"), Path(f"{db}-shm"))
    return b"".join(p.read_bytes() for p in files if p.exists())


def _postgres_leaks(url: str) -> dict[str, int]:
    """Rows of each checkpoint table whose text form holds the marker (or its hex bytes)."""
    needles = (f"%{MARKER}%", f"%{MARKER.encode().hex()}%")
    with psycopg.connect(url) as conn:
        counts = {
            table: conn.execute(
                f"SELECT count(*) FROM {table} t WHERE t::text LIKE %s OR t::text LIKE %s",
                needles,
            ).fetchone()
            for table in TABLES
        }
    return {table: row[0] for table, row in counts.items() if row and row[0]}


def _filenodes(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {
            t: conn.execute("SELECT pg_relation_filenode(%s)", (t,)).fetchone()[0]  # type: ignore[index]
            for t in TABLES
        }


def test_delete_user_threads_removes_every_thread_of_that_user_only(hot_url: str) -> None:
    with open_checkpointer(hot_url) as saver:
        _fill(saver)
        threads = Threads(saver)
        assert sorted(threads.delete_user_threads(ALICE)) == ["a1", "a2", "a3"]
        assert threads.list_threads(ALICE) == []
        assert {t.thread_id for t in threads.list_threads()} == {"b1", "n1"}
        for thread_id in ("a1", "a2", "a3"):
            with pytest.raises(NotFoundError):
                threads.get(thread_id)
            assert list(saver.list(config(thread_id))) == []
            assert threads.sizes([thread_id]) == []
        assert story_graph(saver).get_state(config("b1")).values["items"][0] == "bob"
        assert threads.delete_user_threads(ALICE) == []


def test_sqlite_compaction_leaves_no_byte_of_deleted_threads(tmp_path: Path) -> None:
    db = tmp_path / "hot.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        _fill(saver)
        threads = Threads(saver)
        threads.delete_user_threads(ALICE)
        assert MARKER.encode() in _raw_sqlite(db)  # deleted rows linger until compaction
        assert threads.compact() is True
        assert MARKER.encode() not in _raw_sqlite(db)
        assert Path(f"{db}-wal").stat().st_size == 0
        assert {t.thread_id for t in threads.list_threads()} == {"b1", "n1"}
    assert MARKER.encode() not in _raw_sqlite(db)


@pytest.mark.postgres
def test_postgres_erasure_leaves_no_row_and_rewrites_the_tables(postgres_url: str) -> None:
    with open_checkpointer(postgres_url) as saver:
        _fill(saver)
        assert set(_postgres_leaks(postgres_url)) == set(TABLES)
        threads = Threads(saver)
        assert sorted(threads.delete_user_threads(ALICE)) == ["a1", "a2", "a3"]
        before = _filenodes(postgres_url)
        assert threads.compact() is True
        assert all(node != before[t] for t, node in _filenodes(postgres_url).items())
        assert {t.thread_id for t in threads.list_threads()} == {"b1", "n1"}
    assert _postgres_leaks(postgres_url) == {}


def test_compacting_the_in_memory_saver_is_a_no_op() -> None:
    with open_checkpointer("memory://") as saver:
        _fill(saver)
        threads = Threads(saver)
        threads.delete_user_threads(ALICE)
        assert threads.compact() is False
        assert {t.thread_id for t in threads.list_threads()} == {"b1", "n1"}


async def test_async_delete_user_threads_and_compact(
    durable_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with aopen_checkpointer(durable_url) as saver:
        graph = story_graph(saver)
        await graph.ainvoke({"items": [MARKER]}, config("a1", ALICE))
        await graph.ainvoke({"items": ["bob"]}, config("b1", BOB))
        threads = AsyncThreads(saver)
        assert await threads.delete_user_threads(ALICE) == ["a1"]
        assert await threads.compact() is True
        assert [t.thread_id for t in await threads.list_threads()] == ["b1"]
    if durable_url.startswith("sqlite"):
        assert MARKER.encode() not in _raw_sqlite(tmp_path / "hot.db")
    elif durable_url.startswith("redis"):  # the rewritten AOF holds only live keys
        assert MARKER.encode() not in request.getfixturevalue("redis_service").persisted_bytes()
    else:
        assert _postgres_leaks(durable_url) == {}


def test_delete_user_threads_needs_a_principal() -> None:
    with open_checkpointer("memory://") as saver:
        _fill(saver)
        threads = Threads(saver)
        with pytest.raises(InvalidInputError, match="Principal"):
            threads.delete_user_threads(None)  # type: ignore[arg-type]
        assert len(threads.list_threads()) == 5
