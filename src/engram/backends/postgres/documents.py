"""The document tier on PostgreSQL: JSONB + tsvector + pgvector, isolated by row-level security.

``engram_documents`` keeps each document's full text (``content``) and its parsed
front matter (``metadata`` JSONB); ``engram_document_chunks`` keeps its paragraphs with
a generated ``tsvector`` (GIN index) and an optional pgvector embedding. Both tables
have ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` with a policy on
``current_setting('app.tenant_id')``, which every transaction sets from the
:class:`~engram.Principal` with ``set_config(..., true)`` (transaction-local, so a
pooled connection never carries a tenant over). The store refuses to run as a role
that bypasses RLS; :func:`setup` creates such an application role with the admin
connection.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from engram._principal import Principal
from engram.backends.postgres._cold_sql import tsquery_text
from engram.backends.postgres._roles import (
    CAN_MAINTAIN,
    MAINTAIN_SINCE,
    SET_TENANT,
    clear_emptied_statistics,
    ensure_role,
    grant_sql,
    refuse_bypass,
    role_url,
    tenant_policy,
)
from engram.backends.postgres.cold import indexable
from engram.config import AppRole
from engram.errors import (
    BackendError,
    ConflictError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    StaleWriteError,
)
from engram.recall import Embedder
from engram.stores.documents import (
    DocumentInfo,
    DocumentOptions,
    DocumentStore,
    SearchHit,
    SearchMode,
)
from engram.stores.documents.markdown import (
    ParsedText,
    check_glob,
    fuse,
    glob_regex,
    literal_prefix,
    parse_text,
    words,
)
from engram.stores.documents.paths import join, named_users, split_path

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

TABLES = ("engram_documents", "engram_document_chunks")
TSV_CHARS = 60_000
"""How much of a paragraph (and of its heading) keyword search indexes: the ``tsvector``
of 60,000 characters stays under 400 kB whatever they are, and both under its 1 MB."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE engram_documents (
        tenant_id text NOT NULL,
        path text NOT NULL,
        content text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        digest text NOT NULL,
        size integer NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, path)
    );
    CREATE INDEX engram_documents_metadata ON engram_documents USING gin (metadata);
    CREATE TABLE engram_document_chunks (
        tenant_id text NOT NULL,
        path text NOT NULL,
        chunk_no integer NOT NULL,
        heading text NOT NULL,
        body text NOT NULL,
        line_start integer NOT NULL,
        line_end integer NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', heading), 'A')
            || setweight(to_tsvector('english', body), 'B')
        ) STORED,
        model_id text,
        embedding vector,
        PRIMARY KEY (tenant_id, path, chunk_no),
        FOREIGN KEY (tenant_id, path) REFERENCES engram_documents (tenant_id, path)
            ON DELETE CASCADE ON UPDATE CASCADE
    );
    CREATE INDEX engram_document_chunks_tsv ON engram_document_chunks USING gin (tsv);
    """
    + "".join(f"{statement};" for table in TABLES for statement in tenant_policy(table)),
    # a digest is the SHA-256 of the text (front matter comments included), no longer of
    # its parsed body and metadata (the owner lifts FORCE to reach every tenant's rows);
    # a tsvector holds at most 1 MB: index the first TSV_CHARS characters of each column
    f"""
    ALTER TABLE engram_documents NO FORCE ROW LEVEL SECURITY;
    UPDATE engram_documents SET digest = encode(sha256(convert_to(content, 'UTF8')), 'hex');
    ALTER TABLE engram_documents FORCE ROW LEVEL SECURITY;
    ALTER TABLE engram_document_chunks DROP COLUMN tsv;
    ALTER TABLE engram_document_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', left(heading, {TSV_CHARS})), 'A')
        || setweight(to_tsvector('english', left(body, {TSV_CHARS})), 'B')
    ) STORED;
    CREATE INDEX engram_document_chunks_tsv ON engram_document_chunks USING gin (tsv);
    """,
)

_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS engram_documents_migrations (version integer PRIMARY KEY)"
)
_VACUUM = "VACUUM (FULL, ANALYZE) " + ", ".join(TABLES)
"""Rewrites the tables and re-samples their planner statistics (``pg_statistic`` keeps
sampled values, which an erased document's text would otherwise outlive)."""
_UPSERT = (
    "INSERT INTO engram_documents (tenant_id, path, content, metadata, digest, size) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, path) DO UPDATE SET "
    "content = excluded.content, metadata = excluded.metadata, digest = excluded.digest, "
    "size = excluded.size, updated_at = now()"
)
_REPLACE = (
    "UPDATE engram_documents SET content = %s, metadata = %s, digest = %s, size = %s, "
    "updated_at = now() WHERE tenant_id = %s AND path = %s AND digest = %s"
)
_PATH_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
_INSERT = (
    "INSERT INTO engram_documents (tenant_id, path, content, metadata, digest, size) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, path) DO NOTHING"
)
_DELETE_CHUNKS = "DELETE FROM engram_document_chunks WHERE tenant_id = %s AND path = %s"
_INSERT_CHUNK = (
    "INSERT INTO engram_document_chunks (tenant_id, path, chunk_no, heading, body, "
    "line_start, line_end, model_id, embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_READ = "SELECT content FROM engram_documents WHERE tenant_id = %s AND path = %s"
_METADATA = "SELECT path, metadata FROM engram_documents WHERE tenant_id = %s AND path = ANY(%s)"
_LIST = (
    "SELECT path, size, digest FROM engram_documents "
    "WHERE tenant_id = %s AND starts_with(path, %s) ORDER BY path"
)
_UNDER = "SELECT EXISTS (SELECT 1 FROM engram_documents WHERE tenant_id = %s AND {})"
_IN_TREE = "(path = %s OR starts_with(path, %s))"
_ANY_OF = _UNDER.format("path = ANY(%s)")
_DELETE = f"DELETE FROM engram_documents WHERE tenant_id = %s AND {_IN_TREE} RETURNING path"
_MOVE = (
    "UPDATE engram_documents SET path = %s || substr(path, %s), updated_at = now() "
    f"WHERE tenant_id = %s AND {_IN_TREE}"
)
_KEYWORD = (
    "SELECT path, chunk_no FROM engram_document_chunks, to_tsquery('english', %s) AS q "
    "WHERE tenant_id = %s AND tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, path LIMIT %s"
)
_VECTOR = (
    "SELECT path, chunk_no FROM engram_document_chunks "
    "WHERE tenant_id = %s AND model_id = %s AND embedding <=> %s < 1 "
    "ORDER BY embedding <=> %s, path LIMIT %s"
)
_CHUNKS = (
    "SELECT path, chunk_no, heading, body, line_start, line_end FROM engram_document_chunks "
    "WHERE tenant_id = %s AND (path, chunk_no) IN (SELECT * FROM unnest(%s::text[], %s::int[]))"
)


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the schema and the application role; return the role's URL.

    Idempotent. Runs with an admin connection (schema owner); the returned conninfo
    connects as ``role`` (default ``engram_app``), which RLS always applies to.
    """
    role = role or AppRole()
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('engram_documents_setup'))")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            _migrate(conn)
            maintain = ensure_role(conn, role)
            grants = grant_sql(
                role.name, TABLES, read_only=("engram_documents_migrations",), maintain=maintain
            )
            for statement in grants:
                conn.execute(statement)
    except psycopg.Error as exc:
        raise BackendError(f"document schema setup failed: {exc}") from exc
    return role_url(admin_url, role)


def _migrate(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    conn.execute(_VERSION_TABLE)
    row = conn.execute("SELECT coalesce(max(version), 0) FROM engram_documents_migrations")
    first = row.fetchone()
    done = _int(first[0] if first else 0)
    for version, script in enumerate(MIGRATIONS[done:], start=done + 1):
        conn.execute(script.encode())
        conn.execute("INSERT INTO engram_documents_migrations VALUES (%s)", (version,))


class PostgresDocumentStore(DocumentStore):
    """Documents in PostgreSQL, one tenant per transaction, enforced by row-level security.

    ``url`` must connect as the application role from :func:`setup` (a role with
    ``BYPASSRLS`` or superuser is refused, since RLS would not apply to it).
    """

    def __init__(self, url: str, *, embedder: Embedder | None = None, max_size: int = 4) -> None:
        self._url = url
        self._embedder = embedder
        self._max_size = max_size
        self._pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] | None = None
        self._held = threading.local()

    def _connections(self) -> ConnectionPool[psycopg.Connection[tuple[object, ...]]]:
        if self._pool is None:
            self._check_role()
            pool: ConnectionPool[psycopg.Connection[tuple[object, ...]]] = ConnectionPool(
                self._url,
                min_size=1,
                max_size=self._max_size,
                configure=register_vector,
                open=True,
            )
            self._pool = pool
        return self._pool

    def _check_role(self) -> None:
        refuse_bypass(self._url, "document store")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def compact(self) -> bool:
        """Rewrite both tables and their indexes (``VACUUM FULL``) so deleted documents
        leave the table, TOAST and index files; False if the role may not (needs the
        ``MAINTAIN`` privilege that :func:`setup` grants on PostgreSQL 17+)."""
        try:
            with psycopg.connect(self._url, autocommit=True) as conn:
                if conn.info.server_version < MAINTAIN_SINCE:
                    return False
                allowed = conn.execute(CAN_MAINTAIN, (list(TABLES),)).fetchone()
                if not allowed or not allowed[0]:
                    return False
                conn.execute(_VACUUM)
                clear_emptied_statistics(conn, TABLES)
        except psycopg.Error as exc:
            raise BackendError(f"document compaction failed: {exc}") from exc
        return True

    @contextmanager
    def exclusive(self, principal: Principal, path: str) -> Iterator[None]:
        """One transaction holding the path's advisory lock; this thread's reads and
        writes inside it run in it (as savepoints)."""
        key = f"{principal.tenant_id}/{join(split_path(path))}"  # ids hold no "/"
        with self.transaction(principal) as conn:
            conn.execute(_PATH_LOCK, (key,))
            with self._holding(conn):
                yield

    @contextmanager
    def _one_view(self, principal: Principal) -> Iterator[None]:
        """One REPEATABLE READ transaction (the one this thread holds, if any): what the
        block checks and what it changes are one snapshot, so a row another writer saves
        meanwhile is neither seen nor touched."""
        if getattr(self._held, "conn", None) is not None:
            yield
            return
        with self.transaction(principal, snapshot=True) as conn, self._holding(conn):
            yield

    @contextmanager
    def _holding(self, conn: psycopg.Connection[tuple[object, ...]]) -> Iterator[None]:
        """Run this thread's queries inside ``conn``'s transaction while the block runs."""
        outer, self._held.conn = getattr(self._held, "conn", None), conn
        try:
            yield
        finally:
            self._held.conn = outer

    @contextmanager
    def transaction(
        self, principal: Principal, *, snapshot: bool = False
    ) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
        """A connection inside a transaction scoped to ``principal``'s tenant (inside
        :meth:`exclusive`, a savepoint of its transaction); ``snapshot``: REPEATABLE READ,
        every statement seeing the same rows."""
        held: psycopg.Connection[tuple[object, ...]] | None = getattr(self._held, "conn", None)
        if held is not None:
            with held.transaction():
                held.execute(SET_TENANT, (principal.tenant_id,))
                yield held
            return
        try:
            with self._connections().connection() as conn, conn.transaction():
                if snapshot:
                    conn.execute(_SNAPSHOT)
                conn.execute(SET_TENANT, (principal.tenant_id,))
                yield conn
        except psycopg.Error as exc:
            raise BackendError(f"document query failed: {exc}") from exc

    def _read_text(self, principal: Principal, path: str) -> str:
        key = join(split_path(path))
        with self.transaction(principal) as conn:
            row = conn.execute(_READ, (principal.tenant_id, key)).fetchone()
        if row is None:
            raise NotFoundError(f"{key}: does not exist")
        return str(row[0])

    def _write_text(
        self,
        principal: Principal,
        path: str,
        text: str,
        *,
        overwrite: bool = True,
        expected: str | None = None,
        parsed: ParsedText | None = None,
    ) -> DocumentInfo:
        parts = split_path(path)
        key = join(parts)
        parsed = parse_text(text) if parsed is None else parsed
        chunks = parsed.paragraphs()
        vectors, model_id = self._embed([f"{c.heading}\n{c.text}" for c in chunks])
        size = len(text.encode("utf-8"))
        tenant = principal.tenant_id
        row = (tenant, key, text, Jsonb(parsed.metadata), parsed.digest, size)
        with self.transaction(principal) as conn:
            if self._under(conn, tenant, key):
                raise InvalidInputError(f"{key}: is a directory")
            self._refuse_document_parents(conn, tenant, parts)
            if expected is not None:
                replaced = (*row[2:], tenant, key, expected)
                if not conn.execute(_REPLACE, replaced).rowcount:
                    raise StaleWriteError(f"{key}: changed or removed since it was read")
            elif not conn.execute(_UPSERT if overwrite else _INSERT, row).rowcount:
                raise ConflictError(f"{key}: already exists")
            conn.execute(_DELETE_CHUNKS, (tenant, key))
            conn.cursor().executemany(
                _INSERT_CHUNK,
                [
                    (tenant, key, n, c.heading, c.text, c.line_start, c.line_end, model_id, v)
                    for n, (c, v) in enumerate(zip(chunks, vectors, strict=True))
                ],
            )
        return DocumentInfo(key, size, parsed.digest)

    def _embed(self, texts: builtins.list[str]) -> tuple[builtins.list[object], str | None]:
        if self._embedder is None or not texts:
            return [None] * len(texts), None
        matrix = np.asarray(self._embedder.embed(texts), dtype=np.float32)
        return list(matrix), self._embedder.model_id

    @staticmethod
    def _refuse_document_parents(
        conn: psycopg.Connection[tuple[object, ...]], tenant: str, parts: tuple[str, ...]
    ) -> None:
        """InvalidInputError if a folder on the way to ``parts`` is a document."""
        ancestors = ["/".join(parts[:n]) for n in range(1, len(parts))]
        if ancestors and conn.execute(_ANY_OF, (tenant, ancestors)).fetchone() != (False,):
            raise InvalidInputError(f"{join(parts)}: a parent folder is a document")

    @staticmethod
    def _under(conn: psycopg.Connection[tuple[object, ...]], tenant: str, key: str) -> bool:
        query = _UNDER.format("starts_with(path, %s)")
        row = conn.execute(query, (tenant, key + "/")).fetchone()
        return bool(row and row[0])

    def _list(self, principal: Principal, pattern: str = "**") -> builtins.list[DocumentInfo]:
        regex = glob_regex(check_glob(pattern))
        prefix = literal_prefix(pattern)
        with self.transaction(principal) as conn:
            rows = conn.execute(_LIST, (principal.tenant_id, prefix)).fetchall()
        return [DocumentInfo(str(p), _int(s), str(d)) for p, s, d in rows if regex.match(str(p))]

    def _named_users(
        self, principal: Principal, paths: Sequence[str]
    ) -> Mapping[str, frozenset[str]]:
        with self.transaction(principal) as conn:
            rows = conn.execute(_METADATA, (principal.tenant_id, list(paths))).fetchall()
        return {
            str(path): frozenset(named_users(meta)) if isinstance(meta, dict) else frozenset()
            for path, meta in rows
        }

    def _is_dir(self, principal: Principal, path: str) -> bool:
        parts = split_path(path, allow_root=True)
        if not parts:
            return True
        with self.transaction(principal) as conn:
            return self._under(conn, principal.tenant_id, join(parts))

    def _delete(self, principal: Principal, path: str) -> int:
        key = join(split_path(path))
        with self.transaction(principal) as conn:
            rows = conn.execute(_DELETE, (principal.tenant_id, key, key + "/")).fetchall()
        if not rows:
            raise NotFoundError(f"{key}: does not exist")
        return len(rows)

    def _move(self, principal: Principal, source: str, target: str) -> None:
        src, parts = join(split_path(source)), split_path(target)
        dst = join(parts)
        if dst.startswith(src + "/"):
            raise InvalidInputError("cannot move a directory into itself")
        tenant = principal.tenant_id
        with self.transaction(principal) as conn:
            self._refuse_document_parents(conn, tenant, parts)
            exists = conn.execute(_UNDER.format(_IN_TREE), (tenant, dst, dst + "/")).fetchone()
            if exists and exists[0]:
                raise ConflictError(f"{dst}: already exists")
            moved = conn.execute(_MOVE, (dst, len(src) + 1, tenant, src, src + "/")).rowcount
        if not moved:
            raise NotFoundError(f"{src}: does not exist")

    def _search(
        self, principal: Principal, query: str, *, k: int = 10, mode: SearchMode = "hybrid"
    ) -> builtins.list[SearchHit]:
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}")
        depth, tenant = max(k * 4, 20), principal.tenant_id
        with self.transaction(principal) as conn:
            rankings = []
            if mode in ("hybrid", "keyword") and (terms := indexable(words(query))):
                rows = conn.execute(_KEYWORD, (tsquery_text(terms), tenant, depth)).fetchall()
                rankings.append([f"{p}\x00{n}" for p, n in rows])
            if mode in ("hybrid", "semantic") and self._embedder is not None:
                vector = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
                params = (tenant, self._embedder.model_id, vector, vector, depth)
                rankings.append([f"{p}\x00{n}" for p, n in conn.execute(_VECTOR, params)])
            fused = fuse(rankings)[:k]
            return self._hits(conn, tenant, fused)

    @staticmethod
    def _hits(
        conn: psycopg.Connection[tuple[object, ...]],
        tenant: str,
        fused: builtins.list[tuple[str, float]],
    ) -> builtins.list[SearchHit]:
        keys = [key.split("\x00") for key, _ in fused]
        rows = conn.execute(
            _CHUNKS, (tenant, [p for p, _ in keys], [int(n) for _, n in keys])
        ).fetchall()
        found = {f"{r[0]}\x00{r[1]}": r for r in rows}
        return [
            SearchHit(str(r[0]), str(r[2]), str(r[3]), _int(r[4]), _int(r[5]), score)
            for key, score in fused
            if (r := found.get(key)) is not None
        ]


def _int(value: object) -> int:
    if not isinstance(value, int):
        raise BackendError(f"expected an integer column, got {type(value).__name__}")
    return value


def open_store(location: str, options: DocumentOptions) -> PostgresDocumentStore:
    """The tenant-isolated store on ``location`` (connect as the application role)."""
    return PostgresDocumentStore(location, embedder=options.embedder)
