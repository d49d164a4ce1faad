"""Cold tier on PostgreSQL: JSONB rows + a generated ``tsvector`` (GIN) + pgvector (HNSW).

One table, ``engram_cold_memories``, keyed by tenant first, holds every version
of every fact: current ones and their history. Keyword search uses a generated
``tsvector`` column with a GIN index; vector search uses a cosine HNSW index per
vector dimension. A filtered vector search still returns ``k`` rows: small
selections are searched exactly, large ones through pgvector's iterative index
scan, with an exact search as the fallback when the scan budget runs out.

Vectors travel in pgvector's binary format (``register_vector``), rows go in by
binary ``COPY``. The backend is synchronous and thread-safe through a
connection pool; :class:`~engram.stores.cold.LongTermStore` runs it in a worker
thread for async callers.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from engram.backends.postgres import _cold_sql as q
from engram.errors import BackendError, ConfigError, InvalidInputError, MissingDependencyError
from engram.recall._relevance import keyword_terms
from engram.stores.cold._backend import ChangeSet, ColdBackend, NewVersion, Scan, Vector
from engram.stores.cold._records import (
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
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

Connection = psycopg.Connection[tuple[Any, ...]]
Cursor = psycopg.Cursor[tuple[Any, ...]]

EXACT_BELOW = 1000
"""Selections with fewer embedded versions than this are searched exactly."""


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

    # -- connections ------------------------------------------------------------------

    def setup(self) -> None:
        with self._lock:
            self._migrate()
            if self._pool is None:
                self._pool = self._open_pool()

    def _migrate(self) -> None:
        try:
            with psycopg.connect(self._dsn, autocommit=True) as conn, conn.transaction():
                conn.execute(q.SETUP_LOCK)
                conn.execute(q.VERSION_TABLE)
                row = conn.execute(q.GET_VERSION).fetchone()
                done = int(row[0]) if row else 0
                for version, statements in enumerate(q.MIGRATIONS[done:], start=done + 1):
                    for statement in statements:
                        conn.execute(statement.encode())
                    conn.execute(q.SET_VERSION, (version,))
                row = conn.execute(q.PGVECTOR_VERSION).fetchone()
                require_pgvector(str(row[0]) if row else "")
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL cold schema setup failed: {exc}") from exc

    def _open_pool(self) -> ConnectionPool[Connection]:
        pool: ConnectionPool[Connection] = ConnectionPool(
            self._dsn,
            min_size=1,
            max_size=self._max_connections,
            configure=register_vector,
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
    def _connection(self) -> Iterator[Connection]:
        """A pooled connection (autocommit); driver errors become engram errors."""
        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.DataError as exc:
            raise InvalidInputError(f"PostgreSQL cannot store this value: {exc}") from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL cold store query failed: {exc}") from exc

    @contextmanager
    def _tx(self) -> Iterator[Cursor]:
        """A cursor inside one transaction."""
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            yield cur

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """One statement, one round trip (no BEGIN/COMMIT around a single read)."""
        with self._connection() as conn:
            return conn.execute(sql, tuple(params)).fetchall()

    # -- writes -----------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        self._ensure_indexes(n.vector.shape[0] for n in changes.inserts if n.vector is not None)
        with self._tx() as cur:
            if changes.closures:
                cur.executemany(
                    q.CLOSE, [(c.valid_to, c.superseded_by, c.id) for c in changes.closures]
                )
            if changes.inserts:
                with cur.copy(q.COPY_INSERT) as copy:
                    copy.set_types(list(q.COPY_TYPES))
                    for new in changes.inserts:
                        copy.write_row(_row(new))
            if changes.expiry:
                cur.executemany(q.SET_EXPIRY, [(at, row_id) for row_id, at in changes.expiry])
        if len(changes.inserts) >= q.BULK_ROWS:
            with self._connection() as conn:
                conn.execute(q.ANALYZE_IF_STALE)

    def _ensure_indexes(self, dims: Iterable[int]) -> None:
        """Create the HNSW index of each new vector dimension (before, not inside, a write)."""
        for d in {int(d) for d in dims} - self._indexed:
            with self._tx() as cur:
                cur.execute(q.SETUP_LOCK)
                cur.execute(q.hnsw_index_sql(d))
            self._indexed.add(d)

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        rows = self._read(*q.erase_sql(prefix, keys))  # one statement: atomic on its own
        return EraseCounts(
            keys=len({(r[0], r[1]) for r in rows}),
            versions=len(rows),
            vectors=sum(1 for r in rows if r[3]),
            keyword_entries=sum(1 for r in rows if r[2]),
        )

    def compact(self) -> bool:
        """Rewrite the table and rebuild its indexes (``VACUUM FULL``), so erased rows,
        keyword-index entries (GIN keeps emptied keys otherwise) and vectors are gone
        from the table, TOAST and index files."""
        try:
            with psycopg.connect(self._dsn, autocommit=True) as conn:
                conn.execute(q.VACUUM)
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL compaction failed: {exc}") from exc
        return True

    def sweep(self, now: datetime) -> int:
        with self._tx() as cur:
            return cur.execute(q.SWEEP, (now,)).rowcount

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        self._ensure_indexes([matrix.shape[1]] if len(matrix) else [])
        with self._tx() as cur:
            cur.executemany(
                q.SET_VECTOR, [(v, model_id, i) for v, i in zip(matrix, ids, strict=True)]
            )

    # -- reads ------------------------------------------------------------------------

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        if not keys:
            return {}
        return {r.key: r for r in map(_record, self._read(*q.heads_sql(namespace, keys)))}

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        return [_record(r) for r in self._read(q.FETCH, (list(ids),))]

    def signals(self, ids: Sequence[str]) -> dict[str, tuple[datetime, float]]:
        if not ids:
            return {}
        return {str(r[0]): (utc(r[1]), float(r[2])) for r in self._read(q.SIGNALS, (list(ids),))}

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(*q.scan_sql(scan))]

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.HISTORY, q.history_params(namespace, key))]

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        return sorted(split_namespace(r[0]) for r in self._read(*q.namespaces_sql(prefix)))

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.STALE, (model_id, limit))]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        terms = keyword_terms(query)
        if not terms or k <= 0:
            return []
        return [r[0] for r in self._read(*q.keyword_sql(scan, q.tsquery_text(terms), k))]

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        query = np.ascontiguousarray(vector, dtype=np.float32)
        if k <= 0 or query.ndim != 1 or not len(query):
            return []
        with self._search(k) as cur:
            rows = self._nearest(cur, scan, model_id, query, k)
        ranked = [(str(i), _similarity(d)) for i, d in rows]
        ranked.sort(key=lambda pair: (-pair[1], pair[0]))
        return ranked[:k]

    def explain_vector_search(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> dict[str, Any]:
        """PostgreSQL's plan (``EXPLAIN (FORMAT JSON)``, top node) of the first query
        :meth:`vector_candidates` runs for these arguments, with its settings."""
        query = np.ascontiguousarray(vector, dtype=np.float32)
        with self._search(k) as cur:
            exact = self._small(cur, scan.prefix)
            sql, params = q.vector_sql(scan, model_id, query, k, exact=exact)
            row = cur.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()
        if row is None:
            raise BackendError("EXPLAIN returned no plan")
        plan: dict[str, Any] = row[0][0]["Plan"]
        return plan

    @contextmanager
    def _search(self, k: int) -> Iterator[Cursor]:
        """A read transaction with the vector-search settings, pipelined: BEGIN and
        the settings travel with the first query (one round trip, not three)."""
        params = q.hnsw_settings_params(max(self.ef_search, k), self.max_scan_tuples)
        with (
            self._connection() as conn,
            conn.pipeline(),
            conn.transaction(),
            conn.cursor() as cur,
        ):
            cur.execute(q.HNSW_SETTINGS, params)
            yield cur

    def _nearest(
        self, cur: Cursor, scan: Scan, model_id: str, query: Vector, k: int
    ) -> list[tuple[Any, ...]]:
        """Approximate (HNSW) for large selections, exact for small ones, and exact
        again when the index scan ran out of budget before finding ``k`` rows."""
        if not self._small(cur, scan.prefix):
            rows = cur.execute(*q.vector_sql(scan, model_id, query, k, exact=False)).fetchall()
            if len(rows) >= k:
                return rows
        return cur.execute(*q.vector_sql(scan, model_id, query, k, exact=True)).fetchall()

    def _small(self, cur: Cursor, prefix: Namespace) -> bool:
        if self.exact_below <= 0:
            return False
        row = cur.execute(*q.count_sql(prefix, self.exact_below)).fetchone()
        return row is not None and int(row[0]) < self.exact_below

    def clear_caches(self) -> int:
        return 0


def require_pgvector(version: str) -> None:
    """Refuse a pgvector without iterative index scans (filtered searches would lose rows)."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if len(parts) < 2 or parts < q.PGVECTOR_MINIMUM:
        wanted = ".".join(map(str, q.PGVECTOR_MINIMUM))
        raise ConfigError(f"the cold store needs pgvector >= {wanted}, found {version or 'none'}")


def _similarity(distance: object) -> float:
    """Cosine similarity from pgvector's cosine distance (zero vectors count as orthogonal)."""
    value = float(distance)  # type: ignore[arg-type]
    return 0.0 if math.isnan(value) else 1.0 - value


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
