"""SQL of the SQLite cold backend: schema migrations, statements and pure builders."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from engram.recall import MAX_SEARCH_TERMS
from engram.recall.filters import Fragment, Kind, Scalar, compile_filter
from engram.stores.cold.contract import Scan
from engram.stores.cold.records import NAMESPACE_SEPARATOR, Namespace, View, join_namespace

TABLE = "cold_memories"
FTS = "cold_fts"
TAGS = "cold_tags"
VECTOR_LOG = "cold_vector_log"
"""Rowids changed, in commit order: what the on-disk vector index has still to apply."""
ERASURES = "cold_erasures"
"""Committed erasures, in order (what tells another process to drop its caches)."""
KEYWORDS = "engram_keywords"
"""SQL function (registered on the connection) mapping a text to its index tokens."""
SCOPES = "engram_scopes"
"""SQL function (registered on the connection) mapping a namespace to its scope tokens."""
_TOKENIZE = "tokenize=\"unicode61 categories 'L* N* Co M*'\""
_FTS_V3 = (
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(text, content='{TABLE}', content_rowid='rowid', "
    f"{_TOKENIZE})"
)
FTS_TABLE = (
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(text, scope, content='{TABLE}', "
    f"content_rowid='rowid', {_TOKENIZE})"
)
"""The keyword index: a row's index tokens (``text``) and its namespace's scope tokens
(``scope``, see :func:`scope_text`), which rank nothing (weight 0 in :data:`RANK`)."""
RANK = f"bm25({FTS}, 1.0, 0.0)"
_FTS_FILL = (
    f"INSERT INTO {FTS} (rowid, text, scope) "
    f"SELECT rowid, {KEYWORDS}(text), {SCOPES}(ns) FROM {TABLE} WHERE text != ''"
)
"""The keyword index rebuilt from every row (a migration that changes what it holds)."""
_FTS_V3_FILL = (
    f"INSERT INTO {FTS} (rowid, text) SELECT rowid, {KEYWORDS}(text) FROM {TABLE} WHERE text != ''"
)
FTS_FILLS = frozenset({_FTS_FILL, _FTS_V3_FILL})
"""The migrations' rebuilds of the keyword index from the rows: of several pending at
once, only the last runs (no migration in between reads the index)."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE {TABLE} (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            ns TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            text TEXT NOT NULL,
            tags TEXT NOT NULL,
            source TEXT NOT NULL,
            sensitivity TEXT NOT NULL,
            importance REAL NOT NULL,
            created_at REAL NOT NULL,
            recorded_at REAL NOT NULL,
            valid_from REAL NOT NULL,
            valid_to REAL,
            expires_at REAL,
            ttl_s REAL,
            provenance TEXT NOT NULL,
            superseded_by TEXT,
            model TEXT,
            vector BLOB
        )""",
        f"CREATE INDEX {TABLE}_ns_key ON {TABLE} (ns, key)",
        f"CREATE UNIQUE INDEX {TABLE}_head ON {TABLE} (ns, key) WHERE superseded_by IS NULL",
        f"CREATE INDEX {TABLE}_expires ON {TABLE} (expires_at) WHERE expires_at IS NOT NULL",
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(text, content='{TABLE}', content_rowid='rowid')",
    ),
    (
        # Tag lookups (the profile read on every recall) by index instead of
        # decoding every row's JSON tags: one row per (namespace, tag, version),
        # written with the version (tags never change) and deleted with it.
        f"""CREATE TABLE {TAGS} (
            ns TEXT NOT NULL,
            tag TEXT NOT NULL,
            mrow INTEGER NOT NULL,
            PRIMARY KEY (ns, tag, mrow)
        ) WITHOUT ROWID""",
        f"CREATE INDEX {TAGS}_mrow ON {TAGS} (mrow)",
        f"INSERT OR IGNORE INTO {TAGS} (ns, tag, mrow) "
        f"SELECT m.ns, t.value, m.rowid FROM {TABLE} m, json_each(m.tags) t",
    ),
    (
        # Keywords in every script: the index holds the shared tokenisation
        # (``keyword_text``: unspaced scripts cut into character pairs) and its
        # tokenizer keeps combining marks in their word (Devanagari vowel signs
        # split "चाय" into "च" and "य" before). Rebuilt from the rows.
        f"DROP TABLE {FTS}",
        _FTS_V3,
        _FTS_V3_FILL,
    ),
    (
        # The on-disk vector index (``_index_file``) catches up from this log: every
        # changed rowid gets a sequence number in the transaction that changes it,
        # so a crash between the commit and the index update loses nothing.
        f"CREATE TABLE IF NOT EXISTS {VECTOR_LOG} "
        "(seq INTEGER PRIMARY KEY AUTOINCREMENT, mrow INTEGER NOT NULL)",
        f"CREATE TRIGGER IF NOT EXISTS {VECTOR_LOG}_insert AFTER INSERT ON {TABLE} "
        f"BEGIN INSERT INTO {VECTOR_LOG} (mrow) VALUES (new.rowid); END",
        f"CREATE TRIGGER IF NOT EXISTS {VECTOR_LOG}_update AFTER UPDATE ON {TABLE} "
        f"BEGIN INSERT INTO {VECTOR_LOG} (mrow) VALUES (new.rowid); END",
        f"CREATE TRIGGER IF NOT EXISTS {VECTOR_LOG}_delete AFTER DELETE ON {TABLE} "
        f"BEGIN INSERT INTO {VECTOR_LOG} (mrow) VALUES (old.rowid); END",
    ),
    (
        # One row per committed erasure, written in its transaction: every process
        # over the store reads the last sequence number before a recall and drops
        # the texts its caches hold when it moved (another process erased).
        f"CREATE TABLE IF NOT EXISTS {ERASURES} "
        "(seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL)",
    ),
    (
        # Scope tokens beside the keywords: a search within one user's namespace
        # intersects that namespace's posting list with the query's inside the
        # index, instead of reading every matching row of the store to test its
        # namespace. Rebuilt from the rows (seconds per 100k rows).
        f"DROP TABLE {FTS}",
        FTS_TABLE,
        _FTS_FILL,
    ),
    (
        # Stemmed keywords (``keyword_text`` now holds Snowball stems, and a search
        # looks for the query's stems: "camped" finds "camping"). Rebuilt from the rows.
        f"DROP TABLE {FTS}",
        FTS_TABLE,
        _FTS_FILL,
    ),
    (
        # Each version's stems (``engram.recall.stored_stems`` of its text), written
        # with it: recall's re-ranking reads them with its excerpts instead of stemming
        # every candidate anew. NULL for the rows written before, whose stems are taken
        # from their texts at recall.
        f"ALTER TABLE {TABLE} ADD COLUMN stems TEXT",
    ),
)
"""Append-only: each entry is one schema version (a list of statements)."""

ERASED = f"INSERT INTO {ERASURES} (at) VALUES (?)"
LAST_ERASURE = f"SELECT COALESCE(MAX(seq), 0) FROM {ERASURES}"

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS cold_schema_version (version INTEGER PRIMARY KEY)"
GET_VERSION = "SELECT COALESCE(MAX(version), 0) FROM cold_schema_version"
SET_VERSION = "INSERT INTO cold_schema_version (version) VALUES (?)"

COLUMNS = (
    "id, ns, key, value, text, tags, source, sensitivity, importance, created_at, "
    "recorded_at, valid_from, valid_to, expires_at, ttl_s, provenance, superseded_by, model"
)
INSERT = f"INSERT INTO {TABLE} ({COLUMNS}, vector, stems) VALUES ({', '.join('?' * 20)})"
FTS_INSERT = (
    f"INSERT INTO {FTS} (rowid, text, scope) SELECT rowid, {KEYWORDS}(text), {SCOPES}(ns) "
    f"FROM {TABLE} WHERE id IN (SELECT value FROM json_each(?)) AND text != ''"
)
TAGS_INSERT = (
    f"INSERT OR IGNORE INTO {TAGS} (ns, tag, mrow) SELECT m.ns, t.value, m.rowid "
    f"FROM {TABLE} m, json_each(m.tags) t "
    "WHERE m.id IN (SELECT value FROM json_each(?))"
)
TAGS_DELETE = f"DELETE FROM {TAGS} WHERE mrow IN (SELECT value FROM json_each(?))"
FTS_DELETE = (
    f"INSERT INTO {FTS} ({FTS}, rowid, text, scope) "
    f"VALUES ('delete', ?, {KEYWORDS}(?), {SCOPES}(?))"
)
FTS_OPTIMIZE = f"INSERT INTO {FTS} ({FTS}) VALUES ('optimize')"
CLOSE = f"UPDATE {TABLE} SET valid_to = ?, superseded_by = ? WHERE id = ?"
SET_EXPIRY = f"UPDATE {TABLE} SET expires_at = ? WHERE id = ?"
SET_VECTOR = f"UPDATE {TABLE} SET vector = ?, model = ? WHERE id = ?"
SELECT = f"SELECT {COLUMNS} FROM {TABLE} m"
HISTORY = f"{SELECT} WHERE ns = ? AND key = ? ORDER BY recorded_at, id"
STALE = f"{SELECT} WHERE text != '' AND (model IS NULL OR model != ?) ORDER BY id LIMIT ?"
EXPIRED = f"SELECT rowid, ns, text, id, superseded_by, key FROM {TABLE} WHERE expires_at <= ?"
RELINK = f"UPDATE {TABLE} SET superseded_by = ? WHERE ns = ? AND key = ? AND superseded_by = ?"
"""A swept version's successor named instead of it (``ColdBackend.sweep``; by its key)."""
ROWIDS_OF = f"SELECT id, rowid FROM {TABLE} WHERE id IN (SELECT value FROM json_each(?))"
PRUNE_LOG = f"DELETE FROM {VECTOR_LOG} WHERE seq <= ?"
IDS_OF_ROWIDS = f"SELECT rowid, id, ns FROM {TABLE} WHERE rowid IN (SELECT value FROM json_each(?))"
LEAST_IDS_OF_ROWIDS = (
    f"SELECT rowid, id, ns FROM {TABLE} WHERE rowid IN (SELECT value FROM json_each(?)) "
    "ORDER BY id LIMIT ?"
)
"""The rows of the smallest ids among some rowids (recall's tie-break of equal scores)."""
ROWIDS_BY_ID = f"SELECT rowid FROM {TABLE} ORDER BY id"
"""Every rowid in id order (a walk of the id index): the same tie-break, read until
enough tied rows are met, when the tied rows are most of the table."""
IDS_OF_ROWIDS_BY_ID = f"{IDS_OF_ROWIDS} ORDER BY id"
ROWID_IN = "m.rowid IN (SELECT value FROM json_each(?))"
LOGGED_AFTER = f"SELECT DISTINCT mrow FROM {VECTOR_LOG} WHERE seq > ?"
DELETE_ROWIDS = f"DELETE FROM {TABLE} WHERE rowid IN (SELECT value FROM json_each(?))"


def _json_path(path: tuple[str, ...]) -> str:
    """The JSON path of a field: every label quoted (``parse_filter`` refuses a label with a
    quote, a backslash or a control character, which such a path cannot name)."""
    return "$" + "".join(f'."{part}"' for part in path)


_SQLITE_KINDS: dict[Kind, str] = {
    "number": "('integer', 'real')",
    "string": "('text')",
    "true": "('true')",
    "false": "('false')",
    "null": "('null')",
}


class SQLiteFilterDialect:
    """Reads ``m.value`` JSON with SQLite's json1 functions (BINARY string order)."""

    def is_kind(self, path: tuple[str, ...], kind: Kind) -> Fragment:
        return f"json_type(m.value, ?) IN {_SQLITE_KINDS[kind]}", (_json_path(path),)

    def present(self, path: tuple[str, ...]) -> Fragment:
        return "json_type(m.value, ?) IS NOT NULL", (_json_path(path),)

    def compare(self, path: tuple[str, ...], kind: Kind, sql_op: str, operand: Scalar) -> Fragment:
        if isinstance(operand, int) and not isinstance(operand, bool) and not _int64(operand):
            operand = float(operand)  # (what json_extract reads such a stored integer as)
        return f"json_extract(m.value, ?) {sql_op} ?", (_json_path(path), operand)


def _int64(number: int) -> bool:
    """Whether SQLite binds ``number`` as an INTEGER (a larger one overflows)."""
    return -(2**63) <= number < 2**63


DIALECT = SQLiteFilterDialect()


def prefix_sql(prefix: Namespace) -> Fragment:
    """Label-wise prefix match: the exact namespace or anything below it."""
    if not prefix:
        return "1=1", ()
    joined = join_namespace(prefix)
    upper = chr(ord(NAMESPACE_SEPARATOR) + 1)
    return "(m.ns = ? OR (m.ns >= ? AND m.ns < ?))", (
        joined,
        joined + NAMESPACE_SEPARATOR,
        joined + upper,
    )


def view_sql(view: View) -> Fragment:
    """SQL form of :meth:`View.admits`."""
    now = view.now.timestamp()
    parts: list[str] = []
    params: list[object] = []
    if not view.include_expired:
        parts.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        params.append(now)
    moment = view.as_of.timestamp() if view.as_of is not None else now
    if view.as_of is None and view.include_superseded:
        return " AND ".join(parts) or "1=1", tuple(params)
    if view.as_of is None:
        parts.append("m.superseded_by IS NULL")
    parts.append(
        "m.recorded_at <= ? AND m.valid_from <= ? AND (m.valid_to IS NULL OR m.valid_to > ?)"
    )
    params.extend((moment, moment, moment))
    return " AND ".join(parts), tuple(params)


def tags_sql(prefix: Namespace, tags: Sequence[str]) -> Fragment:
    """Versions carrying any of ``tags``, found through the ``(ns, tag)`` index."""
    if not tags:
        return "1=1", ()
    marks = ", ".join("?" * len(tags))
    scope, params = prefix_sql(prefix)
    scope = scope.replace("m.ns", "t.ns")
    sql = f"m.rowid IN (SELECT t.mrow FROM {TAGS} t WHERE t.tag IN ({marks}) AND {scope})"
    return sql, (*tags, *params)


def where_sql(scan: Scan) -> Fragment:
    """The WHERE clause (without the keyword) selecting ``scan``'s versions."""
    parts = (
        prefix_sql(scan.prefix),
        view_sql(scan.view),
        compile_filter(scan.conditions, DIALECT),
        tags_sql(scan.prefix, scan.tags),
    )
    return " AND ".join(p[0] for p in parts), sum((p[1] for p in parts), ())


def signals_sql(ids: Sequence[str]) -> Fragment:
    sql = f"SELECT m.id, m.recorded_at, m.importance FROM {TABLE} m WHERE m.id IN "
    return sql + "(SELECT value FROM json_each(?))", (json.dumps(list(ids)),)


def scan_sql(scan: Scan) -> Fragment:
    where, params = where_sql(scan)
    sql = f"{SELECT} WHERE {where} ORDER BY m.recorded_at DESC, m.id LIMIT ? OFFSET ?"
    return sql, (*params, scan.limit, scan.offset)


def keyword_sql(scan: Scan, match: str, k: int) -> Fragment:
    """The best ``k`` of ``scan``'s versions matching ``match`` (an :func:`fts_query`),
    ties in the order they were written (rowid: what :data:`RANKED` can cut at).

    The index is the outer loop (``CROSS JOIN``): a plan that walks the namespace's
    rows and probes the index for each costs seconds on a large store."""
    where, params = where_sql(scan)
    sql = (
        f"SELECT m.id FROM {FTS} CROSS JOIN {TABLE} m ON m.rowid = {FTS}.rowid "
        f"WHERE {FTS} MATCH ? AND {where} ORDER BY {RANK}, m.rowid LIMIT ?"
    )
    return sql, (match, *params, k)


RANKED = f"SELECT rowid, {RANK} FROM {FTS} WHERE {FTS} MATCH ? ORDER BY {RANK}, rowid LIMIT ?"
"""The best matches of a query by BM25 alone (ties by rowid): no row is read."""


def admitted_sql(scan: Scan, rowids: Sequence[int]) -> Fragment:
    """Rowid and id of the ``rowids`` that ``scan`` admits."""
    where, params = where_sql(scan)
    sql = f"SELECT m.rowid, m.id FROM {TABLE} m WHERE {ROWID_IN} AND {where}"
    return sql, (json.dumps(list(rowids)), *params)


FIRST_MATCHES = (
    f"SELECT {FTS}.rowid, m.ns FROM {FTS} CROSS JOIN {TABLE} m ON m.rowid = {FTS}.rowid "
    f"WHERE {FTS} MATCH ? LIMIT ?"
)
"""The first matches of a query, in rowid order, with their namespaces."""


def fts_query(
    words: Sequence[str], max_terms: int = MAX_SEARCH_TERMS, scope: Namespace = ()
) -> str:
    """An FTS5 query matching any of ``words`` (each quoted as a string) in the text;
    with ``scope``, only rows at or below that namespace."""
    unique = list(dict.fromkeys(w.replace('"', '""') for w in words))[:max_terms]
    match = "text : (" + " OR ".join(f'"{w}"' for w in unique) + ")"
    if not scope:
        return match
    return f'scope : "{scope_token(join_namespace(scope))}" AND {match}'


def scope_token(ns: str) -> str:
    """The index token of the joined namespace ``ns``: a hash, one word to the tokenizer
    whatever the labels hold. Two namespaces sharing a token (a 64-bit collision) would
    only cost a search the rows it then filters out: every search still tests each row's
    namespace."""
    data = ns.encode("utf-8", "surrogatepass")
    return "ns" + hashlib.blake2b(data, digest_size=8).hexdigest()


def scope_text(ns: str) -> str:
    """The scope tokens of a row in the joined namespace ``ns``: one per prefix of its
    labels (``("u", "alice")`` carries the tokens of ``u`` and of ``u/alice``)."""
    labels = ns.split(NAMESPACE_SEPARATOR)
    return " ".join(
        scope_token(NAMESPACE_SEPARATOR.join(labels[:depth])) for depth in range(1, len(labels) + 1)
    )


def vectors_sql(scan: Scan, model_id: str, *, heads_with_bounds: bool = False) -> Fragment:
    """Rowid, id and vector of ``scan``'s embedded versions; with ``heads_with_bounds``
    only current versions, plus their validity bounds (for a cached matrix)."""
    where, params = where_sql(scan)
    extra = ", m.recorded_at, m.valid_from, m.valid_to, m.expires_at" if heads_with_bounds else ""
    heads = " AND m.superseded_by IS NULL" if heads_with_bounds else ""
    sql = (
        f"SELECT m.rowid, m.id, m.vector{extra} FROM {TABLE} m "
        f"WHERE m.model = ? AND m.vector IS NOT NULL AND {where}{heads}"
    )
    return sql, (model_id, *params)


def vectors_of_sql(scan: Scan, model_id: str, ids: Sequence[str]) -> Fragment:
    """Rowid, id and vector of each of ``ids`` that ``scan`` admits, embedded with
    ``model_id``."""
    sql, params = vectors_sql(scan, model_id)
    return f"{sql} AND m.id IN (SELECT value FROM json_each(?))", (*params, json.dumps(list(ids)))


def rowids_sql(scan: Scan) -> Fragment:
    where, params = where_sql(scan)
    return f"SELECT m.rowid FROM {TABLE} m WHERE {where}", params


def erase_sql(prefix: Namespace, keys: Sequence[str] | None) -> Fragment:
    where, params = prefix_sql(prefix)
    if keys is not None:
        where = "m.ns = ? AND m.key IN (SELECT value FROM json_each(?))"
        params = (join_namespace(prefix), json.dumps(list(keys)))
    return (
        f"SELECT m.rowid, m.ns, m.key, m.text, m.vector IS NOT NULL FROM {TABLE} m WHERE {where}",
        params,
    )


def heads_sql(ns: str, keys: Sequence[str]) -> Fragment:
    sql = (
        f"{SELECT} WHERE m.ns = ? AND m.superseded_by IS NULL "
        "AND m.key IN (SELECT value FROM json_each(?))"
    )
    return sql, (ns, json.dumps(list(keys)))


def excerpts_sql(keys: Sequence[str] | Sequence[int], by_rowid: bool = False) -> Fragment:
    """The excerpts of the rows of these ids (or, ``by_rowid``, of these rowids)."""
    columns = "m.id, m.text, m.value, m.valid_from, m.recorded_at, m.importance, m.stems"
    sql = f"SELECT {columns} FROM {TABLE} m WHERE m.{'rowid' if by_rowid else 'id'} IN "
    return sql + "(SELECT value FROM json_each(?))", (json.dumps(list(keys)),)


def fetch_sql(ids: Sequence[str]) -> Fragment:
    return f"{SELECT} WHERE m.id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)


def namespaces_sql(prefix: Namespace) -> Fragment:
    where, params = prefix_sql(prefix)
    sql = f"SELECT DISTINCT m.ns FROM {TABLE} m WHERE m.superseded_by IS NULL AND {where}"
    return sql + " ORDER BY m.ns", params
