"""The search index of the file document store: SQLite FTS5 plus optional vectors.

The index is a cache of the Markdown files, kept in its own SQLite file (under the
engram home, never inside a document root). Each indexed file is remembered with its
``mtime_ns``, size and SHA-256, so a refresh re-reads only files whose ``stat`` changed
and re-indexes only those whose bytes changed. Paragraphs are indexed with their
heading and line span; keyword (BM25) and vector ranks are fused by reciprocal rank.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engram._files import private_file
from engram.errors import BackendError
from engram.recall import Embedder, Vectors
from engram.stores.documents import SearchHit, SearchMode
from engram.stores.documents.markdown import Paragraph, fts_query, fuse

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE doc_files (
            tenant_id TEXT NOT NULL,
            path TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            digest TEXT NOT NULL,
            PRIMARY KEY (tenant_id, path)
        ) WITHOUT ROWID""",
        """CREATE TABLE doc_chunks (
            id INTEGER PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            path TEXT NOT NULL,
            heading TEXT NOT NULL,
            body TEXT NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            model_id TEXT,
            embedding BLOB
        )""",
        "CREATE INDEX doc_chunks_by_path ON doc_chunks (tenant_id, path)",
        """CREATE VIRTUAL TABLE doc_chunks_fts USING fts5(
            heading, body, content='doc_chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER doc_chunks_ai AFTER INSERT ON doc_chunks BEGIN
            INSERT INTO doc_chunks_fts(rowid, heading, body)
            VALUES (new.id, new.heading, new.body);
        END""",
        """CREATE TRIGGER doc_chunks_ad AFTER DELETE ON doc_chunks BEGIN
            INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, heading, body)
            VALUES ('delete', old.id, old.heading, old.body);
        END""",
    ),
    # the users a file's front matter names (a shared path naming another user is hidden
    # from the rest of the tenant); every file is read again once to fill it in
    (
        "ALTER TABLE doc_files ADD COLUMN users TEXT NOT NULL DEFAULT ''",
        "UPDATE doc_files SET mtime_ns = -1, sha256 = ''",
    ),
    # a digest is the SHA-256 of the file's bytes (front matter comments included), no
    # longer of its parsed body and metadata
    ("UPDATE doc_files SET digest = sha256",),
)
"""The schema: the statements of each version, applied in order (append only)."""

_FTS_OPTIMIZE = "INSERT INTO doc_chunks_fts(doc_chunks_fts) VALUES ('optimize')"
_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS doc_index_version (version INTEGER NOT NULL)"
_FILES = "SELECT path, mtime_ns, size, sha256, digest, users FROM doc_files WHERE tenant_id = ?"
_STATS = "SELECT path, mtime_ns, size FROM doc_files WHERE tenant_id = ?"
_NAMED = "SELECT path, users FROM doc_files WHERE tenant_id = ? AND users <> ''"
_FILE = _FILES + " AND path = ?"
_UPSERT_FILE = (
    "INSERT INTO doc_files (tenant_id, path, mtime_ns, size, sha256, digest, users) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, path) DO UPDATE SET "
    "mtime_ns = excluded.mtime_ns, size = excluded.size, "
    "sha256 = excluded.sha256, digest = excluded.digest, users = excluded.users"
)
_DELETE_FILE = "DELETE FROM doc_files WHERE tenant_id = ? AND path = ?"
_DELETE_CHUNKS = "DELETE FROM doc_chunks WHERE tenant_id = ? AND path = ?"
_INSERT_CHUNK = (
    "INSERT INTO doc_chunks (tenant_id, path, heading, body, line_start, line_end, "
    "model_id, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_KEYWORD = (
    "SELECT c.id FROM doc_chunks_fts JOIN doc_chunks c ON c.id = doc_chunks_fts.rowid "
    "WHERE doc_chunks_fts MATCH ? AND c.tenant_id = ? "
    "ORDER BY bm25(doc_chunks_fts, 2.0, 1.0) LIMIT ?"
)
_VECTORS = "SELECT id, embedding FROM doc_chunks WHERE tenant_id = ? AND model_id = ?"
_STALE = (
    "SELECT id, heading, body FROM doc_chunks "
    "WHERE tenant_id = ? AND (model_id IS NULL OR model_id != ?)"
)
_SET_VECTOR = "UPDATE doc_chunks SET model_id = ?, embedding = ? WHERE id = ?"
_CHUNKS_BY_ID = (
    "SELECT id, path, heading, body, line_start, line_end FROM doc_chunks WHERE id IN ({})"
)


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """What the index remembers about one file."""

    path: str
    mtime_ns: int
    size: int
    sha256: str
    digest: str
    users: str = ""
    """The users its front matter names, space-separated (ids hold no space)."""


def _vector_text(chunk: Paragraph | tuple[str, str]) -> str:
    heading, body = (chunk.heading, chunk.text) if isinstance(chunk, Paragraph) else chunk
    return f"{heading}\n{body}" if heading else body


def _prepare(conn: sqlite3.Connection) -> None:
    """WAL mode, the pragmas, then the pending migrations, in one write transaction taken
    before the version is read: processes opening a new index at once take turns, and
    each finds the schema the one before it left."""
    _enable_wal(conn)
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA synchronous = NORMAL")  # a cache, rebuilt from the files
    conn.execute("BEGIN IMMEDIATE")
    with conn:  # (commits, or rolls back on an error)
        conn.execute(_VERSION_TABLE)
        done = conn.execute("SELECT max(version) FROM doc_index_version").fetchone()[0] or 0
        for version, statements in enumerate(MIGRATIONS[done:], start=done + 1):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO doc_index_version VALUES (?)", (version,))


def _enable_wal(conn: sqlite3.Connection, seconds: float = 30.0) -> None:
    """``PRAGMA journal_mode = WAL``, tried again while it meets ``SQLITE_BUSY``: the
    switch needs the file's exclusive lock and does not wait for it (another process
    opening the same new file), ``busy_timeout`` or not. (The SQLite backends' ``_wal``
    does the same; one backend does not import another.)"""
    deadline, pause = time.monotonic() + seconds, 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", 0)
            if code & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


class DocumentIndex:
    """FTS5 (+ vectors) index of the documents of every tenant, in one SQLite file."""

    def __init__(self, path: Path, embedder: Embedder | None = None) -> None:
        self._path = path
        self._embedder = embedder
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._writes = 0  # bumped by every change of paragraphs made through this index
        self._matrices: dict[str, tuple[tuple[int, int, str], list[int], Vectors]] = {}

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connect()
            try:
                with conn:
                    yield conn
            except sqlite3.Error as exc:
                raise BackendError(f"document index {str(self._path)!r}: {exc}") from exc

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                private_file(self._path)
                conn = sqlite3.connect(self._path, check_same_thread=False)
            except (sqlite3.Error, OSError) as exc:
                raise BackendError(f"cannot open document index {str(self._path)!r}") from exc
            try:
                _prepare(conn)
            except sqlite3.Error as exc:
                conn.close()  # (a half-prepared connection must not stay open)
                raise BackendError(f"cannot open document index {str(self._path)!r}") from exc
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def compact(self) -> bool:
        """Merge the FTS index, vacuum the file and truncate the WAL so erased text is gone."""
        with self._lock:
            conn = self._connect()
            try:
                with conn:
                    conn.execute(_FTS_OPTIMIZE)
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise BackendError(f"document index {str(self._path)!r}: {exc}") from exc
        return True

    def files(self, tenant: str) -> dict[str, IndexedFile]:
        """Every file indexed for ``tenant``, by path."""
        with self._tx() as conn:
            return {row[0]: IndexedFile(*row) for row in conn.execute(_FILES, (tenant,))}

    def stats(self, tenant: str) -> dict[str, tuple[int, int]]:
        """``(mtime_ns, size)`` of every file indexed for ``tenant``, by path."""
        with self._tx() as conn:
            return {row[0]: (row[1], row[2]) for row in conn.execute(_STATS, (tenant,))}

    def named(self, tenant: str) -> dict[str, frozenset[str]]:
        """The users each of ``tenant``'s files names in its front matter, for the files
        that name any (few: the others are left out)."""
        with self._tx() as conn:
            rows = conn.execute(_NAMED, (tenant,))
            return {row[0]: frozenset(str(row[1]).split()) for row in rows}

    def record(self, tenant: str, path: str) -> IndexedFile | None:
        """What the index remembers about one file, if anything."""
        with self._tx() as conn:
            row = conn.execute(_FILE, (tenant, path)).fetchone()
        return IndexedFile(*row) if row else None

    def touch(self, tenant: str, record: IndexedFile) -> None:
        """Remember a new ``stat`` for a file whose bytes did not change."""
        with self._tx() as conn:
            conn.execute(_UPSERT_FILE, (tenant, *_fields(record)))

    def put(self, tenant: str, record: IndexedFile, chunks: Sequence[Paragraph]) -> None:
        """(Re-)index one file: its record and its paragraphs (embedded if configured)."""
        vectors, model_id = self._embed([_vector_text(chunk) for chunk in chunks])
        with self._tx() as conn:
            self._writes += 1
            conn.execute(_DELETE_CHUNKS, (tenant, record.path))
            conn.executemany(
                _INSERT_CHUNK,
                [
                    (tenant, record.path, c.heading, c.text, c.line_start, c.line_end, model_id, v)
                    for c, v in zip(chunks, vectors, strict=True)
                ],
            )
            conn.execute(_UPSERT_FILE, (tenant, *_fields(record)))

    def drop(self, tenant: str, paths: Sequence[str]) -> None:
        """Forget ``paths`` (their records and paragraphs)."""
        if not paths:
            return
        with self._tx() as conn:
            self._writes += 1
            for path in paths:
                conn.execute(_DELETE_CHUNKS, (tenant, path))
                conn.execute(_DELETE_FILE, (tenant, path))

    def _embed(self, texts: list[str]) -> tuple[list[bytes | None], str | None]:
        if self._embedder is None or not texts:
            return [None] * len(texts), None
        matrix = np.asarray(self._embedder.embed(texts), dtype=np.float32)
        return [row.tobytes() for row in matrix], self._embedder.model_id

    def embed_stale(self, tenant: str) -> int:
        """Embed paragraphs indexed without (or with another model's) vectors."""
        if self._embedder is None:
            return 0
        with self._tx() as conn:
            rows = conn.execute(_STALE, (tenant, self._embedder.model_id)).fetchall()
        if not rows:
            return 0
        vectors, model_id = self._embed([_vector_text((r[1], r[2])) for r in rows])
        with self._tx() as conn:
            self._writes += 1
            conn.executemany(
                _SET_VECTOR, [(model_id, v, r[0]) for r, v in zip(rows, vectors, strict=True)]
            )
        return len(rows)

    def search(self, tenant: str, query: str, k: int, mode: SearchMode) -> list[SearchHit]:
        """Fuse the keyword and vector rankings of ``query`` and return the best ``k``."""
        depth = max(k * 4, 20)
        rankings: list[list[str]] = []
        if mode in ("hybrid", "keyword"):
            rankings.append(self._keyword(tenant, query, depth))
        if mode in ("hybrid", "semantic") and self._embedder is not None:
            rankings.append(self._semantic(tenant, query, depth))
        fused = fuse(rankings)[:k]
        return self._hits(fused)

    def _keyword(self, tenant: str, query: str, depth: int) -> list[str]:
        expression = fts_query(query)
        if not expression:
            return []
        with self._tx() as conn:
            return [str(r[0]) for r in conn.execute(_KEYWORD, (expression, tenant, depth))]

    def _semantic(self, tenant: str, query: str, depth: int) -> list[str]:
        assert self._embedder is not None
        ids, matrix = self._matrix(tenant, self._embedder.model_id)
        if not ids:
            return []
        scores = matrix @ self._embedder.embed([query])[0]
        best = np.argsort(-scores, kind="stable")[:depth]
        return [str(ids[i]) for i in best if scores[i] > 0.0]

    def _matrix(self, tenant: str, model_id: str) -> tuple[list[int], Vectors]:
        """The tenant's paragraph vectors, cached until this or another connection writes."""
        with self._tx() as conn:
            stamp = (self._writes, conn.execute("PRAGMA data_version").fetchone()[0], model_id)
            cached = self._matrices.get(tenant)
            if cached is not None and cached[0] == stamp:
                return cached[1], cached[2]
            rows = conn.execute(_VECTORS, (tenant, model_id)).fetchall()
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        vectors: Vectors = matrix.reshape(len(rows), -1) if rows else matrix.reshape(0, 1)
        self._matrices[tenant] = (stamp, [r[0] for r in rows], vectors)
        return [r[0] for r in rows], vectors

    def _hits(self, fused: list[tuple[str, float]]) -> list[SearchHit]:
        if not fused:
            return []
        with self._tx() as conn:
            sql = _CHUNKS_BY_ID.format(",".join("?" * len(fused)))
            rows = {str(r[0]): r for r in conn.execute(sql, [int(key) for key, _ in fused])}
        return [
            SearchHit(row[1], row[2], row[3], row[4], row[5], score)
            for key, score in fused
            if (row := rows.get(key)) is not None
        ]


def _fields(record: IndexedFile) -> tuple[str, int, int, str, str, str]:
    return (
        record.path, record.mtime_ns, record.size, record.sha256, record.digest, record.users
    )  # fmt: skip
