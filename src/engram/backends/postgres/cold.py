"""Cold tier on PostgreSQL: JSONB rows + a generated ``tsvector`` (GIN) + pgvector (HNSW).

One table, ``engram_cold_memories``, keyed by tenant first, holds every version
of every fact: current ones and their history. Keyword search uses a generated
``tsvector`` column with a GIN index; vector search uses a cosine HNSW index per
vector dimension. A vector search is one statement (one round trip) and still
returns ``k`` rows when filtered: small selections are searched exactly, larger
ones by the planner's choice of pgvector's iterative index scan or an exact scan,
with an exact search as the fallback when the index scan's budget runs out. Once
a prefix's size is known (for 30 s), its search runs only the statement it needs.

Vectors travel in pgvector's binary format (``register_vector``), rows go in by
binary ``COPY``. The backend is synchronous and thread-safe through a
connection pool; :class:`~engram.stores.cold.LongTermStore` runs it in a worker
thread for async callers.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from engram._principal import scoped_tenant
from engram.backends.postgres import _cold_sql as q
from engram.backends.postgres._cold_memo import PendingSignals as _PendingSignals
from engram.backends.postgres._cold_memo import SelectionSizes as _SelectionSizes
from engram.backends.postgres._cold_memo import Signal
from engram.backends.postgres._roles import (
    MAY_VACUUM,
    SET_TENANT,
    clear_emptied_statistics,
    ensure_role,
    grant_sql,
    role_url,
)
from engram.config import AppRole
from engram.errors import (
    BackendError,
    ConfigError,
    InvalidInputError,
    MissingDependencyError,
    StaleWriteError,
)
from engram.recall import keyword_text, search_terms
from engram.stores.cold.contract import (
    ChangeSet,
    ColdBackend,
    Excerpt,
    NewVersion,
    Scan,
    Vector,
)
from engram.stores.cold.records import (
    EraseCounts,
    MemoryRecord,
    Namespace,
    Provenance,
    join_namespace,
    split_namespace,
    utc,
)

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg import sql as pgsql
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

Connection = psycopg.Connection[tuple[Any, ...]]
Cursor = psycopg.Cursor[tuple[Any, ...]]

EXACT_BELOW = 1000
"""Selections with fewer embedded versions than this are searched exactly."""
KEYWORD_BATCH = 5000
"""Rows a migration reads per round trip to rewrite their keywords (through a
server-side cursor, so a large table is not held in memory)."""
PIPELINE_BYTES = 64 * 1024
"""The most a read's parameters may hold (characters of text, bytes) to be pipelined:
psycopg's pipeline mode was seen to wait forever sending a parameter of ~2 MB. A read
with more runs in a transaction of its own, a round trip per statement."""
MAX_LEXEME_BYTES = 2046
"""The longest word (UTF-8 bytes) PostgreSQL's text search keeps: a longer one is left
out of every ``tsvector``, so a query term that long never matches (and is not sent)."""


@dataclass(frozen=True)
class BufferFit:
    """The cold table and its indexes against the server's buffer cache.

    Searches read the HNSW index and the table's rows at random. When the two do not
    fit in ``shared_buffers``, most searches read pages back from the operating
    system (100k items with 384-d vectors, a 261 MB table and a 195 MB index, at
    PostgreSQL's default 128 MB: 12 ms of server CPU per vector search instead of 5,
    keyword search p95 41 ms instead of 7).
    """

    shared_buffers: int
    """Bytes."""
    relations: tuple[tuple[str, int], ...]
    """``(name, bytes)`` of the table (with TOAST) and of each index, largest first."""

    @property
    def total(self) -> int:
        return sum(size for _, size in self.relations)

    @property
    def fits(self) -> bool:
        return self.total <= self.shared_buffers


class PostgresColdBackend(ColdBackend):
    """Cold store in a PostgreSQL database (pgvector required).

    ``exact_below``: selections smaller than this skip the HNSW index (an exact
    scan is faster there and always complete). ``ef_search``: HNSW candidate
    list size (raised to ``k`` when a query asks for more). ``max_scan_tuples``:
    how far an iterative index scan may walk before the exact fallback.
    """

    def __init__(
        self,
        dsn: str,
        *,
        max_connections: int = 4,
        exact_below: int = EXACT_BELOW,
        ef_search: int = 100,
        max_scan_tuples: int = 20000,
    ) -> None:
        self._dsn = dsn
        self._max_connections = max_connections
        self.exact_below = exact_below
        self.ef_search = ef_search
        self.max_scan_tuples = max_scan_tuples
        self._pool: ConnectionPool[Connection] | None = None
        self._indexed: set[int] = set()
        self._lock = threading.Lock()
        self._pending = _PendingSignals()
        self._sizes = _SelectionSizes()
        self._held = threading.local()

    # -- connections ------------------------------------------------------------------

    def setup(self) -> None:
        with self._lock:
            self._migrate()
            if self._pool is None:
                self._pool = self._open_pool()

    def _migrate(self) -> None:
        """Bring the schema up to date; with it current, change nothing (so the
        application role, which may create nothing, opens a store set up by the admin)."""
        try:
            with psycopg.connect(self._dsn, autocommit=True) as conn, conn.transaction():
                if _current(conn):
                    return
                migrate(conn)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ConfigError(
                "the cold schema is missing or old and this role may not change it: "
                f"run setup() as the admin first ({exc})"
            ) from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL cold schema setup failed: {exc}") from exc

    def _open_pool(self) -> ConnectionPool[Connection]:
        pool: ConnectionPool[Connection] = ConnectionPool(
            self._dsn,
            min_size=1,
            max_size=self._max_connections,
            configure=_configure,
            kwargs={"autocommit": True},
            open=False,
        )
        try:
            pool.open(wait=True, timeout=30)
        except psycopg.Error as exc:
            pool.close()
            raise BackendError(f"cannot connect to the PostgreSQL cold store: {exc}") from exc
        return pool

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    @property
    def pool(self) -> ConnectionPool[Connection]:
        if self._pool is None:
            raise BackendError("PostgreSQL cold backend is not set up; call setup() first")
        return self._pool

    @contextmanager
    def atomically(self, namespace: Namespace) -> Iterator[None]:
        """One transaction holding the namespace's advisory lock; this thread's reads
        and writes inside run on its connection (writes as savepoints)."""
        outer = getattr(self._held, "conn", None)
        if outer is None:
            self._held.compact_due = False
        with self._connection() as conn:
            with conn.transaction():
                conn.execute(q.NAMESPACE_LOCK, (join_namespace(namespace),))
                self._held.conn = conn
                try:
                    yield
                finally:
                    self._held.conn = outer
            if outer is None and getattr(self._held, "compact_due", False):
                self.compact()  # (an erasure inside the transaction, now committed)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        """A pooled connection (autocommit), or the one :meth:`atomically` holds; driver
        errors become engram errors."""
        held: Connection | None = getattr(self._held, "conn", None)
        if held is not None:
            yield held  # errors are translated where it was taken
            return
        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.errors.UniqueViolation as exc:
            raise StaleWriteError(f"another writer changed this memory meanwhile: {exc}") from exc
        except psycopg.DataError as exc:
            raise InvalidInputError(f"PostgreSQL cannot store this value: {exc}") from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL cold store query failed: {exc}") from exc

    @contextmanager
    def _tx(self, tenant: str | None) -> Iterator[Cursor]:
        """A cursor inside one transaction acting for ``tenant`` (row-level security)."""
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(SET_TENANT, (tenant,))
            yield cur

    def _read(
        self, tenant: str | None, sql: str, params: Sequence[object] = ()
    ) -> list[tuple[Any, ...]]:
        """One statement acting for ``tenant``, in one round trip (:meth:`_statements`)."""
        with self._statements(tenant, params) as (conn, sync):
            cur = conn.execute(sql, tuple(params))
            sync()
            return cur.fetchall()

    @contextmanager
    def _statements(
        self, tenant: str | None, params: Sequence[object]
    ) -> Iterator[tuple[Connection, Callable[[], None]]]:
        """A connection whose statements act for ``tenant`` in one transaction, and the
        call that sends them: pipelined, they share the implicit transaction of one sync
        (one round trip); with parameters over :data:`PIPELINE_BYTES`, an explicit
        transaction runs each as it comes."""
        with self._connection() as conn:
            if _size(params) > PIPELINE_BYTES:
                with conn.transaction():
                    conn.execute(SET_TENANT, (tenant,))
                    yield conn, _sent
            else:
                with conn.pipeline() as pipeline:
                    conn.execute(SET_TENANT, (tenant,))
                    yield conn, pipeline.sync

    # -- writes -----------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        self._ensure_indexes(n.vector.shape[0] for n in changes.inserts if n.vector is not None)
        by_tenant: dict[str, list[NewVersion]] = {}
        for new in changes.inserts:
            by_tenant.setdefault(new.record.namespace[0], []).append(new)
        first = next(iter(by_tenant), None)
        with self._tx(first or scoped_tenant()) as cur:
            if changes.closures:
                cur.executemany(
                    q.CLOSE, [(c.valid_to, c.superseded_by, c.id) for c in changes.closures]
                )
            for tenant, inserts in by_tenant.items():
                if tenant != first:
                    cur.execute(SET_TENANT, (tenant,))
                _insert(cur, inserts)
            if changes.expiry:
                cur.execute(SET_TENANT, (first or scoped_tenant(),))
                cur.executemany(q.SET_EXPIRY, [(at, row_id) for row_id, at in changes.expiry])
        if len(changes.inserts) >= q.BULK_ROWS:
            with self._connection() as conn:
                conn.execute(q.analyze_if_stale_sql(len(changes.inserts)))

    def _ensure_indexes(self, dims: Iterable[int]) -> None:
        """Create the HNSW index of each new vector dimension (before, not inside, a write)."""
        for d in {int(d) for d in dims} - self._indexed:
            with self._tx(None) as cur:
                cur.execute(q.RELATION_EXISTS, (q.hnsw_index_name(d),))
                found = cur.fetchone()
                if not (found and found[0]):
                    cur.execute(q.SETUP_LOCK)
                    cur.execute(q.hnsw_index_sql(d))
            self._indexed.add(d)

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        tenant, prefix = _scope(prefix)
        rows = self._read(tenant, *q.erase_sql(prefix, keys))  # one statement: atomic
        if rows:  # after the commit: a process that sees the count move finds it gone
            self._read(tenant, q.NOTE_ERASURE)
        self._pending.clear()
        self._sizes.clear()
        return EraseCounts(
            keys=len({(r[0], r[1]) for r in rows}),
            versions=len(rows),
            vectors=sum(1 for r in rows if r[3]),
            keyword_entries=sum(1 for r in rows if r[2]),
        )

    def compact(self) -> bool:
        """Rewrite the table and rebuild its indexes (``VACUUM FULL``), so erased rows,
        keyword-index entries (GIN keeps emptied keys otherwise) and vectors are gone
        from the table, TOAST and index files; False if this role may not (the
        application role needs the ``MAINTAIN`` privilege setup() grants on 17+). Inside
        :meth:`atomically` it runs when the transaction commits (``VACUUM FULL`` would wait
        for the very locks this thread holds), and returns False now."""
        self._held.compact_due = getattr(self._held, "conn", None) is not None
        if self._held.compact_due:
            return False
        try:
            with psycopg.connect(self._dsn, autocommit=True) as conn:
                allowed = conn.execute(MAY_VACUUM, (q.TABLE,)).fetchone()
                if not allowed or not allowed[0]:
                    return False
                conn.execute(q.VACUUM)
                clear_emptied_statistics(conn, (q.TABLE,))
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL compaction failed: {exc}") from exc
        return True

    def sweep(self, now: datetime) -> int:
        rows = self._read(None, q.SWEEP, (now,))
        return int(rows[0][0]) if rows else 0

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        self._ensure_indexes([matrix.shape[1]] if len(matrix) else [])
        with self._tx(scoped_tenant()) as cur:
            cur.executemany(
                q.SET_VECTOR, [(v, model_id, i) for v, i in zip(matrix, ids, strict=True)]
            )

    # -- reads ------------------------------------------------------------------------

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        if not keys:
            return {}
        rows = self._read(_scope(namespace)[0], *q.heads_sql(namespace, keys))
        return {r.key: r for r in map(_record, rows)}

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        return [_record(r) for r in self._read(scoped_tenant(), q.FETCH, (list(ids),))]

    def signals(self, ids: Sequence[str]) -> dict[str, Signal]:
        """From the candidate searches that returned ``ids`` when they did, else one query."""
        tenant = scoped_tenant()
        found = self._pending.take(tenant or "", ids)
        missing = [i for i in ids if i not in found]
        if missing:
            rows = self._read(tenant, q.SIGNALS, (missing,))
            found.update((str(r[0]), (utc(r[1]), float(r[2]))) for r in rows)
        return found

    def excerpts(self, ids: Sequence[str]) -> dict[str, Excerpt]:
        """One query; the signals the candidate searches noted of ``ids`` are dropped
        (the excerpts carry them)."""
        if not ids:
            return {}
        tenant = scoped_tenant()
        self._pending.take(tenant or "", ids)
        rows = self._read(tenant, q.EXCERPTS, (list(ids),))
        return {
            str(r[0]): Excerpt(str(r[0]), r[1], r[2], utc(r[3]), utc(r[4]), float(r[5]))
            for r in rows
        }

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        tenant, prefix = _scope(scan.prefix)
        return [_record(r) for r in self._read(tenant, *q.scan_sql(replace(scan, prefix=prefix)))]

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        rows = self._read(_scope(namespace)[0], q.HISTORY, q.history_params(namespace, key))
        return [_record(r) for r in rows]

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        tenant, prefix = _scope(prefix)
        rows = self._read(tenant, *q.namespaces_sql(prefix))
        return sorted(split_namespace(r[0]) for r in rows)

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(scoped_tenant(), q.STALE, (model_id, limit))]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        terms = indexable(search_terms(query))
        if not terms or k <= 0:
            return []
        tenant, prefix = _scope(scan.prefix)
        scan = replace(scan, prefix=prefix)
        tsquery = q.tsquery_text(terms)
        rows = self._read(tenant, *q.keyword_sql(scan, tsquery, k))
        self._pending.note(tenant or "", rows)
        return [r[0] for r in rows]

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        query = np.ascontiguousarray(vector, dtype=np.float32)
        if k <= 0 or query.ndim != 1 or not len(query):
            return []
        tenant, prefix = _scope(scan.prefix)
        rows = self._nearest(replace(scan, prefix=prefix), query, model_id, k)
        self._pending.note(tenant or "", ((i, at, imp) for i, _, at, imp in rows))
        ranked = [(str(i), _similarity(d)) for i, d, _, _ in rows]
        ranked.sort(key=lambda pair: (-pair[1], pair[0]))
        return ranked[:k]

    def cosines(
        self, scan: Scan, ids: Sequence[str], vector: Vector, model_id: str
    ) -> dict[str, float]:
        query = np.ascontiguousarray(vector, dtype=np.float32)
        if not ids or query.ndim != 1 or not len(query):
            return {}
        tenant, prefix = _scope(scan.prefix)
        sql, params = q.cosines_sql(replace(scan, prefix=prefix), model_id, query, ids)
        return {str(i): _similarity(d) for i, d in self._read(tenant, sql, params)}

    def explain_vector_search(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> dict[str, Any]:
        """The plan (``EXPLAIN (ANALYZE, FORMAT JSON)``, top node) of the statement
        :meth:`vector_candidates` runs for these arguments, with its settings, keeping
        only the nodes that ran (a branch skipped by its gate is dropped)."""
        query = np.ascontiguousarray(vector, dtype=np.float32)
        scan = replace(scan, prefix=_scope(scan.prefix)[1])
        rows = self._nearest(scan, query, model_id, k, "EXPLAIN (ANALYZE, FORMAT JSON) ")
        if not rows:
            raise BackendError("EXPLAIN returned no plan")
        return _executed(rows[0][0][0]["Plan"])

    def _nearest(
        self, scan: Scan, query: Vector, model_id: str, k: int, lead: str = ""
    ) -> list[tuple[Any, ...]]:
        """Run (``lead`` +) a vector search, by what is known of the selection's size.

        Known small: the exact search alone. Known larger: the HNSW-ordered search
        alone (after its settings, one round trip), then the exact one only if it
        came up short. Unknown: :func:`~engram.backends.postgres._cold_sql.nearest_sql`
        (both, gated in one statement) with the size check beside it, in one round
        trip. With ``lead`` (an ``EXPLAIN``) the first statement's plan is returned.

        Pipelined on an autocommit connection, the statements share the implicit
        transaction that the final Sync closes, so the ``set_config(..., true)``
        settings (the tenant, the HNSW knobs) hold for the search and end with it
        (no BEGIN/COMMIT round trips; with large parameters, an explicit transaction:
        :meth:`_statements`).
        """
        tenant = scan.prefix[0] if scan.prefix else None
        small = self._sizes.get(scan.prefix)
        if small:
            sql, params = q.vector_sql(scan, model_id, query, k, exact=True)
            return self._read(tenant, lead + sql, params)
        settings = q.hnsw_settings_params(max(self.ef_search, k), self.max_scan_tuples)
        if small is False:
            sql, params = q.vector_sql(scan, model_id, query, k, exact=False)
        else:
            sql, params = q.nearest_sql(scan, model_id, query, k, self.exact_below)
        with self._statements(tenant, params) as (conn, sync):
            size = (
                None if small is False else conn.execute(*q.size_sql(scan.prefix, self.exact_below))
            )
            conn.execute(q.HNSW_SETTINGS, settings)
            cur = conn.execute(lead + sql, tuple(params))
            sync()
            rows = cur.fetchall()
            if size is not None:
                checked = size.fetchone()
                self._sizes.put(scan.prefix, bool(checked and checked[0]))
        if small is False and not lead and len(rows) < k:
            return self._read(tenant, *q.vector_sql(scan, model_id, query, k, exact=True))
        return rows

    def clear_caches(self) -> int:
        return self._pending.clear() + self._sizes.clear()

    def erasures(self) -> int:
        return int(self._read(None, q.ERASURE_COUNT)[0][0])

    def buffer_fit(self) -> BufferFit:  # sizes only: no tenant's rows are read
        """How the table and its indexes compare with the server's ``shared_buffers``."""
        with self._connection() as conn:
            relations = tuple((str(n), int(b)) for n, b in conn.execute(q.RELATION_SIZES))
            row = conn.execute(q.SHARED_BUFFERS).fetchone()
        if row is None:
            raise BackendError("PostgreSQL reported no shared_buffers setting")
        return BufferFit(int(row[0]), relations)


def _insert(cur: Cursor, inserts: Sequence[NewVersion]) -> None:
    """Insert versions (of the transaction's tenant): a few by INSERT, many by binary COPY."""
    if len(inserts) < q.BULK_ROWS:
        cur.executemany(q.INSERT, [_json_row(new) for new in inserts])
        return
    cur.execute(q.CREATE_INCOMING)
    with cur.copy(q.COPY_INSERT) as copy:
        copy.set_types(list(q.COPY_TYPES))
        for new in inserts:
            copy.write_row(_row(new))
    cur.execute(q.MOVE_INCOMING)
    cur.execute(f"DROP TABLE {q.INCOMING}")  # a second bulk load may follow in this transaction


def _json_row(new: NewVersion) -> tuple[object, ...]:
    row = list(_row(new))
    row[4], row[16] = json.dumps(row[4]), json.dumps(row[16])
    return tuple(row)


def _scope(prefix: Namespace) -> tuple[str | None, Namespace]:
    """The tenant a call on ``prefix`` acts for, and the prefix it reads: its first label
    is the tenant; an empty prefix reads the tenant of :func:`~engram.tenant_scope`
    (with none, row-level security leaves the application role nothing to read)."""
    if prefix:
        return prefix[0], prefix
    tenant = scoped_tenant()
    return tenant, () if tenant is None else (tenant,)


def _current(conn: Connection) -> bool:
    """Whether the schema is at the newest version (read without creating anything)."""
    if conn.execute(q.RELATION_EXISTS, (q.VERSION_TABLE_NAME,)).fetchone() != (True,):
        return False
    row = conn.execute(q.GET_VERSION).fetchone()
    return row is not None and int(row[0]) >= len(q.MIGRATIONS)


def migrate(conn: Connection) -> None:
    """Apply the missing migrations on an admin connection inside a transaction."""
    conn.execute(q.SETUP_LOCK)
    conn.execute(q.VERSION_TABLE)
    row = conn.execute(q.GET_VERSION).fetchone()
    done = int(row[0]) if row else 0
    for version, statements in enumerate(q.MIGRATIONS[done:], start=done + 1):
        for statement in statements:
            _migration_step(conn, statement)
        conn.execute(q.SET_VERSION, (version,))
    row = conn.execute(q.PGVECTOR_VERSION).fetchone()
    require_pgvector(str(row[0]) if row else "")


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the cold schema as the admin and grant the application role
    (created if missing, default ``engram_app``); return the role's connection string.

    Idempotent. The role reads and writes the memories table under row-level
    security, reads the version table, and runs the sweep and HNSW-index functions.
    """
    role = role or AppRole()
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn, conn.transaction():
            migrate(conn)
            maintain = ensure_role(conn, role)
            functions = (q.SWEEP_FUNCTION, q.HNSW_FUNCTION, q.ERASED_FUNCTION, q.ERASURES_FUNCTION)
            grants = grant_sql(
                role.name,
                (q.TABLE,),
                read_only=(q.VERSION_TABLE_NAME,),
                functions=functions,
                maintain=maintain,
            )
            for statement in grants:
                conn.execute(statement)
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL cold schema setup failed: {exc}") from exc
    return role_url(admin_url, role)


def _configure(conn: Connection) -> None:
    """A new pooled connection: pgvector's binary adapters and the session settings."""
    register_vector(conn)
    conn.execute(q.SESSION_SETTINGS)


def require_pgvector(version: str) -> None:
    """Refuse a pgvector without iterative index scans (filtered searches would lose rows)."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if len(parts) < 2 or parts < q.PGVECTOR_MINIMUM:
        wanted = ".".join(map(str, q.PGVECTOR_MINIMUM))
        raise ConfigError(f"the cold store needs pgvector >= {wanted}, found {version or 'none'}")


def _executed(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` without the subtrees that never ran (``Actual Loops`` 0)."""
    children = [_executed(c) for c in plan.get("Plans", ()) if c.get("Actual Loops", 1) > 0]
    return {**plan, "Plans": children} if "Plans" in plan else plan


def _similarity(distance: object) -> float:
    """Cosine similarity from pgvector's cosine distance (zero vectors count as orthogonal)."""
    value = float(distance)  # type: ignore[arg-type]
    return 0.0 if math.isnan(value) else 1.0 - value


def _migration_step(conn: Connection, statement: str) -> None:
    """Run one migration statement; a keyword marker has the client tokenise the rows it
    selects, copy the keywords into a temporary table and apply them in one ``UPDATE``
    with the table's secondary indexes dropped and built again afterwards (20k rows:
    14 s, against 30 s keeping the indexes and 54 s updating row by row). When no row's
    keywords change (a backfill already wrote the current ones), nothing is rebuilt."""
    rows = {q.BACKFILL_KEYWORDS: q.KEYWORD_ROWS, q.REKEY_KEYWORDS: q.EVERY_KEYWORD_ROW}
    if statement not in rows:
        conn.execute(statement.encode())
        return
    conn.execute(q.CREATE_NEW_KEYWORDS)
    with conn.cursor(name="engram_keyword_rows") as read, conn.cursor() as write:
        read.execute(rows[statement])
        while batch := read.fetchmany(KEYWORD_BATCH):
            # one COPY per batch: the connection cannot fetch while a COPY is open
            with write.copy(q.COPY_NEW_KEYWORDS) as copy:
                for tenant, id_, text in batch:
                    copy.write_row((tenant, id_, keyword_text(text)))
    if conn.execute(q.CHANGED_KEYWORD).fetchone() is not None:
        indexes = conn.execute(q.REBUILT_INDEXES).fetchall()
        for name, _ in indexes:
            conn.execute(pgsql.SQL("DROP INDEX {}").format(pgsql.Identifier(name)))
        conn.execute(q.APPLY_NEW_KEYWORDS)
        for _, definition in indexes:
            conn.execute(definition.encode())
    conn.execute(f"DROP TABLE {q.NEW_KEYWORDS}")  # a later step may create it again


def indexable(terms: Iterable[str]) -> list[str]:
    """``terms`` but those longer than :data:`MAX_LEXEME_BYTES` (which never match)."""
    return [t for t in terms if len(t.encode("utf-8", "surrogatepass")) <= MAX_LEXEME_BYTES]


def _size(value: object) -> int:
    """About how much ``value`` sends as parameters: characters of text, bytes of binary
    values and arrays, summed through lists and mappings (8 for anything else)."""
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, list | tuple):
        return sum(map(_size, value))
    if isinstance(value, dict):
        return sum(_size(k) + _size(v) for k, v in value.items())
    return 8


def _sent() -> None:
    """Nothing to send: outside a pipeline each statement ran as it was executed."""


def _row(new: NewVersion) -> tuple[object, ...]:
    r = new.record
    embedded = new.vector is not None
    return (
        r.namespace[0],
        r.id,
        join_namespace(r.namespace),
        r.key,
        dict(r.value),
        r.text,
        list(r.tags),
        r.source,
        r.sensitivity,
        r.importance,
        r.created_at,
        r.recorded_at,
        r.valid_from,
        r.valid_to,
        r.expires_at,
        r.ttl_seconds,
        r.provenance.to_json(),
        r.superseded_by,
        r.embedding_model if embedded else None,
        np.asarray(new.vector, dtype=np.float32) if embedded else None,
        keyword_text(r.text),
    )


def _record(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(
        id=row[0],
        namespace=split_namespace(row[1]),
        key=row[2],
        value=row[3],
        text=row[4],
        tags=tuple(row[5]),
        source=row[6],
        sensitivity=row[7],
        importance=row[8],
        created_at=utc(row[9]),
        recorded_at=utc(row[10]),
        valid_from=utc(row[11]),
        valid_to=None if row[12] is None else utc(row[12]),
        expires_at=None if row[13] is None else utc(row[13]),
        ttl_seconds=row[14],
        provenance=Provenance.from_json(row[15]),
        superseded_by=row[16],
        embedding_model=row[17],
    )
