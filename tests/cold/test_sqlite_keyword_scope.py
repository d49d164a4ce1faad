"""SQLite keyword search within a namespace: the index's scope tokens.

A search within one user's namespace can let the keyword index intersect the query's
matches with that namespace's scope token instead of reading every match's row. Both
ways must return the same rows, never another namespace's, and erasure must take the
tokens with the rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest

from engram.backends.sqlite import _cold_sql
from engram.backends.sqlite.cold import SAMPLE, SQLiteColdBackend
from engram.errors import BackendError
from engram.recall.filters import parse_filter
from engram.stores.cold import LongTermStore, open_store
from engram.stores.cold.contract import Scan
from engram.stores.cold.records import NAMESPACE_SEPARATOR, View, join_namespace

# Namespaces that a string prefix would confuse ("al" / "alice"), nested ones, and labels
# with spaces, quotes, a bidi control and another script.
USERS = (
    ("t", "alice"),
    ("t", "al"),
    ("t", "alice", "notes"),
    ("t", 'qu"ote'),
    ("t", "sp ace~\u202e"),
    ("t", "名前"),
    ("tt", "alice"),
)


def _fill(store: LongTermStore, rows_per_user: int) -> None:
    items = []
    for u, ns in enumerate(USERS):
        for i in range(rows_per_user):
            words = ["kayak", "river"] if i % 3 else ["kayak", "harbour", "river"]
            text = " ".join([*words, f"w{i % 7}", f"user{u}", "trip"][: 3 + i % 3])
            items.append((ns, f"k{i}", {"text": text}))
    store.put_many(items)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LongTermStore]:
    with open_store(f"sqlite:///{tmp_path / 'm.db'}", embedder=None) as s:
        _fill(s, 40)
        yield s


def _ids(store: LongTermStore, prefix: tuple[str, ...], query: str, scoped: bool) -> list[str]:
    backend = store.backend
    assert isinstance(backend, SQLiteColdBackend)
    scan = Scan(prefix, View(now=store.now()))
    with mock.patch.object(SQLiteColdBackend, "_scoped", return_value=scoped):
        return backend.keyword_candidates(scan, query, 25)


@pytest.mark.parametrize("prefix", [*USERS, ("t",), ("tt",), ("t", "nobody"), ()])
@pytest.mark.parametrize("query", ["kayak harbour", "river w3 trip", "user2 user5", "名前"])
def test_a_scoped_search_returns_what_the_unscoped_one_does(
    store: LongTermStore, prefix: tuple[str, ...], query: str
) -> None:
    unscoped = _ids(store, prefix, query, scoped=False)
    assert _ids(store, prefix, query, scoped=True) == unscoped
    joined = join_namespace(prefix)
    for record in store.backend.fetch(unscoped):
        ns = join_namespace(record.namespace)
        assert not prefix or ns == joined or ns.startswith(joined + NAMESPACE_SEPARATOR)


def test_a_string_prefix_of_a_namespace_is_not_its_scope(store: LongTermStore) -> None:
    found = store.backend.fetch(_ids(store, ("t", "al"), "kayak", scoped=True))
    assert found and {r.namespace for r in found} == {("t", "al")}


def test_the_scope_pays_for_a_small_namespace_and_not_for_the_whole_store(
    tmp_path: Path,
) -> None:
    backend = SQLiteColdBackend(tmp_path / "m.db")
    store = LongTermStore(backend, embedder=None)
    store.setup()
    store.put_many(
        [(("t", f"u{i % 50}"), f"k{i}", {"text": f"common word {i}"}) for i in range(2000)]
    )
    match = _cold_sql.fts_query(["common"])
    assert backend._scoped(("t", "u3"), match) is True
    assert backend._scoped(("t",), match) is False
    assert backend._scoped((), match) is False
    few = _cold_sql.fts_query(["1999"])  # fewer matches than the sample: read them all
    assert len(backend._read(_cold_sql.FIRST_MATCHES, (few, SAMPLE))) < SAMPLE
    assert backend._scoped(("t", "u3"), few) is None
    scan = Scan(("t", "u49"), View(now=store.now()))
    with mock.patch.object(SQLiteColdBackend, "_ranked_first", side_effect=AssertionError):
        found = backend.keyword_candidates(scan, "1999", 10)
    assert found == _read_every_match(store, scan, "1999", 10)
    assert found[0] == store.backend.heads(("t", "u49"), ["k1999"])["k1999"].id


def _index_terms(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, {_cold_sql.FTS}, row)")
        return {t for (t,) in conn.execute("SELECT term FROM temp.terms")}


def test_erasure_takes_the_scope_tokens_with_the_rows(store: LongTermStore, tmp_path: Path) -> None:
    gone = _cold_sql.scope_token(join_namespace(("t", "alice", "notes")))
    kept = _cold_sql.scope_token(join_namespace(("t", "alice")))
    assert {gone, kept} <= _index_terms(tmp_path / "m.db")
    store.forget(("t", "alice", "notes"))
    terms = _index_terms(tmp_path / "m.db")
    assert gone not in terms
    assert kept in terms  # alice's own rows still carry her scope
    assert _ids(store, ("t", "alice"), "kayak", scoped=True)
    assert _ids(store, ("t", "alice", "notes"), "kayak", scoped=True) == []


def test_a_store_of_the_text_only_index_upgrades(tmp_path: Path) -> None:
    """Version 5 indexed the text alone: setup rebuilds the index with scope tokens."""
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=None) as s:
        _fill(s, 20)
    with sqlite3.connect(path) as conn:  # back to version 5, as an older engram left it
        conn.execute(f"DROP TABLE {_cold_sql.FTS}")
        conn.execute(_cold_sql.MIGRATIONS[2][1])
        conn.execute(
            f"INSERT INTO {_cold_sql.FTS} (rowid, text) SELECT rowid, text FROM {_cold_sql.TABLE}"
        )
        conn.execute("DELETE FROM cold_schema_version WHERE version > 5")
        conn.execute(f"ALTER TABLE {_cold_sql.TABLE} DROP COLUMN stems")  # (version 8's)
    with open_store(f"sqlite:///{path}", embedder=None) as s:
        for prefix in USERS:
            scoped = _ids(s, prefix, "kayak river", scoped=True)
            assert scoped and scoped == _ids(s, prefix, "kayak river", scoped=False)


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    """An older engram writing beside a newer one would index rows without the newer
    schema's columns (here: scope tokens); a store names the version it was left at."""
    path = tmp_path / "m.db"
    with open_store(f"sqlite:///{path}", embedder=None) as s:
        _fill(s, 1)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO cold_schema_version (version) VALUES (?)", (99,))
    with (
        pytest.raises(BackendError, match="schema version 99"),
        open_store(f"sqlite:///{path}", embedder=None),
    ):
        pass


def _read_every_match(store: LongTermStore, scan: Scan, query: str, k: int) -> list[str]:
    """The plain join: every match's row read and tested, then the best ``k``."""
    with (
        mock.patch.object(SQLiteColdBackend, "_scoped", return_value=False),
        mock.patch.object(SQLiteColdBackend, "_ranked_first", return_value=None),
    ):
        return store.backend.keyword_candidates(scan, query, k)


def test_ranking_before_reading_returns_what_reading_every_match_does(tmp_path: Path) -> None:
    """Over most of the store the index ranks first and reads only the best rows: the
    same rows as reading every match, when most of the best are old versions, expired,
    outside a filter, tied with each other (hundreds of texts of one length and
    words), or fewer than ``k``."""
    with open_store(f"sqlite:///{tmp_path / 'm.db'}", embedder=None) as s:
        items = [
            (("t", f"u{i % 5}"), f"k{i}", {"text": f"harbour kayak {i}", "n": i % 9})
            for i in range(600)
        ]
        s.put_many(items)
        for version in range(40):  # one key rewritten: 39 superseded versions rank high
            s.put(("t", "u1"), "busy", {"text": f"kayak kayak harbour v{version}"})
        s.put_many([(("t", "u2"), f"same{i}", {"text": "kayak harbour"}) for i in range(30)])
        short = s.remember(("t", "u3"), "kayak kayak kayak harbour", ttl=timedelta(days=1))
        now = s.now()
        backend = s.backend
        assert isinstance(backend, SQLiteColdBackend)
        later = View(now=now + timedelta(days=2))
        scans = [
            Scan(("t",), View(now=now)),
            Scan(("t",), later),
            Scan((), View(now=now, include_superseded=True)),
            Scan(("t",), View(now=now), parse_filter({"n": 4})),
            Scan(("t",), View(now=now), parse_filter({"n": 99})),
        ]
        for scan in scans:
            for query, k in (("kayak harbour", 10), ("kayak", 45), ("harbour 17", 3), ("v3", 1)):
                ranked = backend.keyword_candidates(scan, query, k)
                assert ranked == _read_every_match(s, scan, query, k), (scan, query, k)
                old = scan.view.include_superseded
                expected = 0 if scan is scans[4] else (int(old) if query == "v3" else k)
                assert len(ranked) == expected, (scan, query, k)
        assert short.record is not None
        assert short.record.id in backend.keyword_candidates(scans[0], "kayak", 3)
        assert short.record.id not in backend.keyword_candidates(scans[1], "kayak", 3)
        kayak = _cold_sql.fts_query(["kayak"])
        assert backend._ranked_first(scans[0], kayak, 10) is not None  # ties cut by rowid
        assert backend._ranked_first(scans[4], kayak, 10) is None  # a filter admitting none
