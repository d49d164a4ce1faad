"""SQLite-specific behaviour of the cold backend: caches, other writers, migrations, FTS input."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from engram import Principal
from engram.backends.sqlite import _cold_sql
from engram.backends.sqlite.cold import BUSY_TIMEOUT_MS, SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, open_store
from engram.stores.cold.contract import Scan
from engram.stores.cold.records import View

ME = Principal("t", "me")


def test_a_write_by_another_process_invalidates_the_vector_cache(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    with (
        open_store(url, embedder=HashEmbedder()) as a,
        open_store(url, embedder=HashEmbedder()) as b,
    ):
        a.remember(ME, "likes sailing on lakes", tags=["preference"])
        assert len(a.recall(ME, "sailing lakes")) == 1  # matrix cached in a
        b.remember(ME, "sailing lessons every sunday on lakes", tags=["plan"])
        assert len(a.recall(ME, "sailing lakes")) == 2


def test_the_prefix_row_lists_are_bounded(tmp_path: Path) -> None:
    backend = SQLiteColdBackend(tmp_path / "m.db", cache_rows=1)  # 4 slots of prefix lists
    store = LongTermStore(backend, embedder=HashEmbedder())
    store.setup()
    try:
        for user in ("u1", "u2"):
            for i in range(3):
                store.remember(("t", user), f"fact {i} about {user} gardens", tags=["fact"])
        assert len(store.recall(("t", "u1"), "gardens")) == 3
        assert len(store.recall(("t", "u2"), "gardens")) == 3
        assert store.backend.clear_caches() == 1  # 3 + 3 slots > 4: the older list left
    finally:
        store.close()


def test_setup_is_idempotent_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    for _ in range(2):
        backend = SQLiteColdBackend(path)
        backend.setup()
        backend.close()
    with sqlite3.connect(path) as conn:
        versions = conn.execute("SELECT version FROM cold_schema_version").fetchall()
    assert versions == [(v,) for v in range(1, len(_cold_sql.MIGRATIONS) + 1)]


@pytest.mark.parametrize(
    "query", ['"quoted', "a AND b OR NOT c", "NEAR(x y)", "star*", "col:umn", "^caret", "'", "  "]
)
def test_keyword_queries_are_never_parsed_as_fts_syntax(tmp_path: Path, query: str) -> None:
    with open_store(f"sqlite:///{tmp_path}/m.db", embedder=HashEmbedder()) as store:
        store.remember(ME, "a note about stars and columns", tags=["fact"])
        found = store.recall(ME, query)
        assert all(r.record.namespace == ME.namespace for r in found)


def test_unset_backend_raises_a_clear_error(tmp_path: Path) -> None:
    from engram.errors import BackendError

    with pytest.raises(BackendError, match="setup"):
        SQLiteColdBackend(tmp_path / "m.db").history(("t",), "k")


def test_a_version_1_database_gains_indexed_tags_on_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    with open_store(url, embedder=HashEmbedder()) as old:
        old.remember(ME, "prefers window seats", tags=["preference", "travel"])
        old.remember(ME, "rides a bike to work", tags=["fact"])
    with sqlite3.connect(tmp_path / "m.db") as conn:  # back to the version 1 schema
        conn.execute(f"DROP TABLE {_cold_sql.TAGS}")
        conn.execute("DELETE FROM cold_schema_version WHERE version > 1")
        conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")  # (version 8's)
    with open_store(url, embedder=HashEmbedder()) as new:
        new.remember(ME, "avoids red-eye flights", tags=["constraint"])
        view = View(new.now())
        found = new.backend.scan(Scan(ME.namespace, view, tags=("preference", "constraint")))
    assert {r.text for r in found} == {"prefers window seats", "avoids red-eye flights"}
    with sqlite3.connect(tmp_path / "m.db") as conn:
        tags = conn.execute(f"SELECT tag FROM {_cold_sql.TAGS} ORDER BY tag").fetchall()
    assert [t for (t,) in tags] == ["constraint", "fact", "preference", "travel"]


def test_a_database_of_the_old_keyword_schema_upgrades(tmp_path: Path) -> None:
    """Version 2 indexed raw text with the default tokenizer: a Chinese sentence was one
    token and Devanagari words fell apart. Setup rebuilds the index from the rows."""
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=None) as store:
        store.remember(ME, "我喜欢喝绿茶", key="tea", tags=["fact"])
        store.remember(ME, "मुझे हरी चाय पसंद है", key="chai", tags=["fact"])
        store.remember(ME, "मैं रोज़ सुबह चलता हूँ", key="walk", tags=["fact"])
    with sqlite3.connect(path) as conn:  # back to version 2, as an older engram left it
        conn.execute(f"DROP TABLE {_cold_sql.FTS}")
        conn.execute(_cold_sql.MIGRATIONS[0][-1])
        conn.execute(
            f"INSERT INTO {_cold_sql.FTS} (rowid, text) SELECT rowid, text FROM {_cold_sql.TABLE}"
        )
        conn.execute("DELETE FROM cold_schema_version WHERE version > 2")
        conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")  # (version 8's)
    with open_store(f"sqlite:///{path}", embedder=None) as store:
        assert [r.record.key for r in store.recall(ME, "绿茶")] == ["tea"]
        assert [r.record.key for r in store.recall(ME, "चाय")] == ["chai"]
        store.forget(ME, keys=["tea"])
        assert store.recall(ME, "绿茶") == []


def test_setup_waits_for_another_connection_holding_the_write_lock(tmp_path: Path) -> None:
    """A second server worker starting while the first migrates a large store (a minute
    for a million rows) waits for the migration instead of failing after the usual
    five-second busy timeout."""
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=None) as store:
        store.remember(ME, "likes kayaks", tags=["fact"])
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # as a migrating process holds it
    release = threading.Timer(BUSY_TIMEOUT_MS / 1000 + 1.5, holder.execute, ("COMMIT",))
    release.start()
    try:
        with open_store(f"sqlite:///{path}", embedder=None) as store:
            assert [r.record.text for r in store.recall(ME, "kayaks")] == ["likes kayaks"]
    finally:
        release.join()
        holder.close()
