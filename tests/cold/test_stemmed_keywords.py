"""Keyword search on stems: an inflected query word finds the memory, on every backend.

The SQLite, PostgreSQL and in-process keyword indexes hold Snowball stems and are
searched for the query's stems; Qdrant's sparse vectors hold the words and their stems.
A store written before holds the words as written: SQLite and PostgreSQL rebuild their
index from the rows once, at setup.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

import pytest
from cold_support import Clock

from engram import Principal
from engram.backends.sqlite import _cold_sql
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import (
    DEFAULT_MIN_SCORE,
    HashEmbedder,
    index_words,
    keyword_text,
    search_terms,
    stored_stems,
)
from engram.stores.cold import LongTermStore, open_store

if TYPE_CHECKING:
    from conftest import StoreFactory

ME = Principal("t", "me")
TEXTS = {
    "camp": "We went camping by the lake last summer",
    "library": "The libraries open at nine on weekdays",
    "tea": "我喜欢喝绿茶",
}


def _keys(store: LongTermStore, query: str, who: Principal = ME) -> list[str]:
    return [r.record.key for r in store.recall(who, query, context=None)]


def _fill(store: LongTermStore, who: Principal = ME) -> None:
    for key, text in TEXTS.items():
        store.remember(who, text, key=key, tags=["fact"])


def test_the_search_terms_are_the_stems_of_the_query_words() -> None:
    assert search_terms("Where did they camp, by which lakes?") == ["camp", "lake"]
    assert keyword_text("Camping LAKES 绿茶") == "camp lake 绿 茶 绿茶"


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("camped", "camp"),
        ("Camps near a lake", "camp"),
        ("library", "library"),
        ("the weekday opening", "library"),
        ("绿茶", "tea"),
    ],
)
def test_an_inflected_word_finds_the_memory(make_store: StoreFactory, query: str, key: str) -> None:
    store = make_store(embedder=None)
    _fill(store)
    assert _keys(store, query) == [key]


def test_a_word_shared_by_no_memory_finds_nothing(make_store: StoreFactory) -> None:
    store = make_store(embedder=None)
    _fill(store)
    assert _keys(store, "campaign libretto") == []


def test_another_users_stems_are_not_found(make_store: StoreFactory) -> None:
    store = make_store(embedder=None)
    _fill(store, Principal("t", "other"))
    store.remember(ME, "The kettle is on", key="kettle", tags=["fact"])
    assert _keys(store, "camped") == []
    assert _keys(store, "camped", Principal("t", "other")) == ["camp"]


# -- stores written before: the index rebuilt from the rows -----------------------------


STEMMED = 7
"""The SQLite schema version whose migration rebuilt the keyword index on stems."""

STORED_STEMS = 8
"""The SQLite schema version that added each version's stems (``stems``)."""


def _vocabulary(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {_cold_sql.FTS}, row)")
        return {t for (t,) in conn.execute("SELECT term FROM temp.v")}


def _as_written(path: Path, version: int) -> None:
    """Back to ``version``: the index of the words as written, as an older engram left it."""
    with sqlite3.connect(path) as conn:
        conn.create_function("words", 1, lambda text: " ".join(index_words(text)))
        conn.create_function(_cold_sql.SCOPES, 1, _cold_sql.scope_text)
        conn.execute(f"DROP TABLE {_cold_sql.FTS}")
        conn.execute(_cold_sql.FTS_TABLE)
        conn.execute(
            f"INSERT INTO {_cold_sql.FTS} (rowid, text, scope) "
            f"SELECT rowid, words(text), {_cold_sql.SCOPES}(ns) FROM {_cold_sql.TABLE}"
        )
        conn.execute("DELETE FROM cold_schema_version WHERE version > ?", (version,))
        if version < STORED_STEMS:  # (nor had it the stems column)
            conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")


def test_a_sqlite_store_of_words_as_written_is_rebuilt_on_stems(tmp_path: Path) -> None:
    path, fresh = tmp_path / "m.db", tmp_path / "fresh.db"
    for where in (path, fresh):
        with open_store(f"sqlite:///{where}", embedder=None, clock=Clock()) as s:
            _fill(s)
    _as_written(path, STEMMED - 1)
    assert "camping" in _vocabulary(path)
    with open_store(f"sqlite:///{path}", embedder=None) as s:
        assert _keys(s, "camped") == ["camp"]
    assert _vocabulary(path) == _vocabulary(fresh)


def test_several_pending_rebuilds_of_the_sqlite_index_run_once(tmp_path: Path) -> None:
    """A store from before the scope tokens (version 5) needs two rebuilds; the first
    would be thrown away by the second, so only the second reads the rows."""
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=None, clock=Clock()) as s:
        _fill(s)
    with sqlite3.connect(path) as conn:  # version 5's index: the words, no scope column
        conn.execute(f"DROP TABLE {_cold_sql.FTS}")
        conn.execute(_cold_sql.MIGRATIONS[2][1])
        conn.execute(
            f"INSERT INTO {_cold_sql.FTS} (rowid, text) SELECT rowid, text FROM {_cold_sql.TABLE}"
        )
        conn.execute("DELETE FROM cold_schema_version WHERE version > 5")
        conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")
    statements: list[str] = []
    connect = SQLiteColdBackend._connect

    def traced(self: SQLiteColdBackend) -> sqlite3.Connection:
        conn = connect(self)
        conn.set_trace_callback(statements.append)
        return conn

    with (
        mock.patch.object(SQLiteColdBackend, "_connect", traced),
        open_store(f"sqlite:///{path}", embedder=None) as s,
    ):
        assert _keys(s, "camped") == ["camp"]
        assert _keys(s, "绿茶") == ["tea"]
    fills = [s for s in statements if s in _cold_sql.FTS_FILLS]
    assert len(fills) == 1
    with sqlite3.connect(path) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM cold_schema_version")]
    assert versions == list(range(1, len(_cold_sql.MIGRATIONS) + 1))


@pytest.mark.postgres
def test_a_postgres_store_of_words_as_written_is_rekeyed_by_its_owner(postgres_url: str) -> None:
    """The owner rewrites every tenant's keywords, though the table forces row-level
    security on its owner too; the policy is forced again afterwards, and the indexes
    dropped for the rewrite are there again."""
    import psycopg
    from psycopg import sql

    from engram.backends.postgres import _cold_sql as pq
    from engram.backends.postgres.cold import migrate

    other = Principal("u", "me")
    with open_store(postgres_url, embedder=HashEmbedder(8)) as s:  # a vector index too
        _fill(s)
        _fill(s, other)
    owner = f"engram_test_owner_{uuid.uuid4().hex[:8]}"
    indexes = f"SELECT indexname, indexdef FROM pg_indexes WHERE tablename = '{pq.TABLE}'"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        before = set(conn.execute(indexes).fetchall())
        rows = conn.execute(f"SELECT tenant, id, text FROM {pq.TABLE}").fetchall()
        with conn.cursor() as cur:
            cur.executemany(
                f"UPDATE {pq.TABLE} SET kw = %s WHERE tenant = %s AND id = %s",
                [(" ".join(index_words(text)), t, i) for t, i, text in rows],
            )
        rekey = next(n for n, steps in enumerate(pq.MIGRATIONS, 1) if pq.REKEY_KEYWORDS in steps)
        conn.execute(f"DELETE FROM {pq.VERSION_TABLE_NAME} WHERE version >= %s", (rekey,))
        conn.execute(
            sql.SQL("CREATE ROLE {} NOSUPERUSER NOBYPASSRLS").format(sql.Identifier(owner))
        )
        conn.execute(sql.SQL("GRANT CREATE ON SCHEMA public TO {}").format(sql.Identifier(owner)))
        for table in (pq.TABLE, pq.VERSION_TABLE_NAME):
            conn.execute(
                sql.SQL("ALTER TABLE {} OWNER TO {}").format(
                    sql.Identifier(table), sql.Identifier(owner)
                )
            )
        # (the owner of the schema owns its functions too: a later migration replaces one)
        conn.execute(
            sql.SQL(f"ALTER FUNCTION {pq.SWEEP_FUNCTION} OWNER TO {{}}").format(
                sql.Identifier(owner)
            )
        )
    try:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(owner)))
            with conn.transaction():
                migrate(conn)
            conn.execute("RESET ROLE")
            kw = dict(
                ((t, i), k) for t, i, k in conn.execute(f"SELECT tenant, id, kw FROM {pq.TABLE}")
            )
            forced = conn.execute(
                "SELECT relforcerowsecurity FROM pg_class WHERE relname = %s", (pq.TABLE,)
            ).fetchone()
            after = set(conn.execute(indexes).fetchall())
        assert kw == {(t, i): keyword_text(text) for t, i, text in rows}
        assert len({t for t, _ in kw}) == 2
        assert forced == (True,)
        assert after == before  # the indexes dropped for the rewrite are all built again
        assert any("hnsw" in definition for _, definition in after)
        with open_store(postgres_url, embedder=None) as s:
            assert _keys(s, "camped") == ["camp"]
            assert _keys(s, "camped", other) == ["camp"]
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            for table in (pq.TABLE, pq.VERSION_TABLE_NAME):
                conn.execute(
                    sql.SQL("ALTER TABLE {} OWNER TO CURRENT_USER").format(sql.Identifier(table))
                )
            conn.execute(f"ALTER FUNCTION {pq.SWEEP_FUNCTION} OWNER TO CURRENT_USER")
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(owner)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(owner)))


@pytest.mark.postgres
def test_a_postgres_rekey_that_changes_no_row_rebuilds_no_index(postgres_url: str) -> None:
    """Keywords already current (a backfill wrote them, or the step runs again): the
    migration leaves the indexes as they are instead of building them anew."""
    import psycopg

    from engram.backends.postgres import _cold_sql as pq
    from engram.backends.postgres.cold import migrate

    with open_store(postgres_url, embedder=HashEmbedder(8)) as s:
        _fill(s)
    indexes = f"SELECT indexrelid FROM pg_index WHERE indrelid = '{pq.TABLE}'::regclass"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        before = sorted(conn.execute(indexes).fetchall())
        conn.execute(
            f"DELETE FROM {pq.VERSION_TABLE_NAME} WHERE version = %s", (len(pq.MIGRATIONS),)
        )
        with conn.transaction():
            migrate(conn)
        after = sorted(conn.execute(indexes).fetchall())
    assert len(before) > 3 and after == before  # the same index objects, none built again
    with open_store(postgres_url, embedder=None) as s:
        assert _keys(s, "camped") == ["camp"]


# -- each version's stems, stored for the re-ranking --------------------------------------


TURNS = [
    ("Caroline: I went camping by the lake with my kids", "Caroline"),
    ("Melanie: The libraries open late on Thursdays", "Melanie"),
    ("Caroline:我喜欢喝绿茶 and café au lait", "Caroline"),
    ("Caroline: Caroline's résumé lists her pottery classes", "Caroline"),
    ("a turn without its speaker's label", "Melanie"),
]


def _turns(store: LongTermStore) -> None:
    for n, (text, speaker) in enumerate(TURNS):
        store.put(ME.namespace, f"t{n}", {"text": text, "speaker": speaker})


def _later() -> Clock:
    """A clock an hour after the one the turns were written with."""
    clock = Clock()
    clock.advance(hours=1)
    return clock


def _recalled(store: LongTermStore, query: str) -> list[tuple[str, float]]:
    return [(r.record.key, r.score) for r in store.recall(ME, query, k=5)]


def test_a_sqlite_store_keeps_each_versions_stems(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=HashEmbedder(), clock=Clock()) as s:
        _turns(s)
    with sqlite3.connect(path) as conn:
        rows = dict(conn.execute(f"SELECT text, stems FROM {_cold_sql.TABLE}").fetchall())
    assert rows == {text: stored_stems(text) for text, _ in TURNS}
    assert rows[TURNS[0][0]].split() == ["carolin", "went", "camp", "lake", "kid"]


@pytest.mark.parametrize(
    "query",
    ["Where did Caroline go camping?", "When does the library open?", "绿茶", "pottery résumé"],
)
def test_a_sqlite_store_from_before_the_stems_recalls_as_a_new_one(
    tmp_path: Path, query: str
) -> None:
    """Rows written before the stems were stored (NULL) are stemmed from their texts,
    the label of the speaker left out as it is from stored stems: the same results."""
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    for where in (old, new):
        with open_store(f"sqlite:///{where}", embedder=HashEmbedder(), clock=Clock()) as s:
            _turns(s)
    with sqlite3.connect(old) as conn:  # as an older engram left it
        conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")
        conn.execute("DELETE FROM cold_schema_version WHERE version >= ?", (STORED_STEMS,))
    with (
        open_store(f"sqlite:///{old}", embedder=HashEmbedder(), clock=_later()) as before,
        open_store(f"sqlite:///{new}", embedder=HashEmbedder(), clock=_later()) as after,
    ):
        recalled, old_way = _recalled(after, query), _recalled(before, query)
        assert recalled[0] == old_way[0] and recalled[0][1] > DEFAULT_MIN_SCORE  # an answer
        assert dict(old_way) == dict(recalled)  # (the weak ones tie, ordered by their ids)
    with sqlite3.connect(old) as conn:
        assert {s for (s,) in conn.execute(f"SELECT stems FROM {_cold_sql.TABLE}")} == {None}
