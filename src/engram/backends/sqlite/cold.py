"""Cold tier on one SQLite file: rows + FTS5 keyword index + float32 vector BLOBs.

Vectors are searched without extensions: the current versions of a namespace
prefix are loaded once into a numpy matrix (cached per prefix and model, least
recently used first out beyond ``cache_rows`` rows, updated in place by this
store's writes (see :mod:`~engram.backends.sqlite._heads`), dropped when another
process commits), and searched exactly by
:class:`~engram.backends.sqlite._vectors.NearestRows` (an int8 first pass over
large matrices, a float32 one over small ones, then the few rows that can reach
the top k rescored; one thread). Keyword searches use a second read-only
connection, so a caller may run them while the vector product runs (both
release the GIL).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.backends.sqlite import _cold_sql as q
from engram.backends.sqlite._heads import HeadMatrix, Heads
from engram.backends.sqlite._vectors import QUANTIZE_FROM, NearestRows
from engram.errors import BackendError, StaleWriteError
from engram.recall import keyword_terms, keyword_text
from engram.stores.cold.contract import (
    ChangeSet,
    ColdBackend,
    NewVersion,
    Scan,
    Vector,
)
from engram.stores.cold.records import (
    EraseCounts,
    MemoryRecord,
    Namespace,
    Provenance,
    View,
    from_epoch,
    in_prefix,
    join_namespace,
    split_namespace,
    to_epoch,
)

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA secure_delete=ON",
    # Reads through a memory map: a recall's keyword join, signals and fetch touch
    # scattered rows, and without it each page costs a read() call (~20% of the
    # CPU of a 100k-item search).
    "PRAGMA mmap_size=1073741824",
)


def _keywords(text: str | None) -> str:
    return keyword_text(text) if text else ""


class SQLiteColdBackend(ColdBackend):
    """Cold store in a SQLite file (WAL mode); one connection guarded by a lock."""

    def __init__(
        self,
        path: str | Path,
        *,
        cache_rows: int = 1_000_000,
        quantize_from: int | None = QUANTIZE_FROM,
    ) -> None:
        self._path = Path(path)
        self._quantize_from = quantize_from
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._depth = 0
        """Open transactions of this connection: 1 inside :meth:`atomically`."""
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        self._cache: OrderedDict[tuple[Namespace, str], HeadMatrix] = OrderedDict()
        self._cache_rows = cache_rows
        self._data_version = -1
        self._generation = 0
        """Counts writes: a matrix loaded across one is not cached (it may miss it)."""

    @property
    def path(self) -> Path:
        return self._path

    # -- connection -----------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BackendError("SQLite cold backend is not set up; call setup() first")
        return self._conn

    def setup(self) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            with self._tx() as cur:
                cur.execute(q.VERSION_TABLE)
                done = cur.execute(q.GET_VERSION).fetchone()[0]
                for version, statements in enumerate(q.MIGRATIONS, start=1):
                    if version > done:
                        for statement in statements:
                            cur.execute(statement)
                        cur.execute(q.SET_VERSION, (version,))
            if self._reader is None:
                self._reader = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            for pragma in PRAGMAS:
                conn.execute(pragma)
            conn.create_function(q.KEYWORDS, 1, _keywords, deterministic=True)
        except (sqlite3.Error, OSError) as exc:
            raise BackendError(f"cannot open SQLite cold store {self._path}: {exc}") from exc
        return conn

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
            with self._reader_lock:
                if self._reader is not None:
                    self._reader.close()
                    self._reader = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def atomically(self, namespace: Namespace) -> Iterator[None]:
        """One write transaction (``BEGIN IMMEDIATE``: the file's write lock, so every
        other connection waits) around the block; writes inside join it."""
        with self._tx():
            yield

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cur = self.conn.cursor()
            if self._depth:  # inside atomically(): join its transaction
                try:
                    yield cur
                finally:
                    cur.close()
                return
            self._depth += 1
            try:
                cur.execute("BEGIN IMMEDIATE")
                yield cur
                cur.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                self._abort(cur)
                raise _integrity(exc) from exc
            except sqlite3.Error as exc:
                self._abort(cur)
                raise BackendError(f"SQLite cold store write failed: {exc}") from exc
            except BaseException:
                self._abort(cur)
                raise
            finally:
                self._depth -= 1
                cur.close()

    def _abort(self, cur: sqlite3.Cursor) -> None:
        self._rollback(cur)
        self._cache.clear()  # it may hold what was rolled back

    @staticmethod
    def _rollback(cur: sqlite3.Cursor) -> None:
        if cur.connection.in_transaction:
            cur.execute("ROLLBACK")

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._lock:
            try:
                return self.conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"SQLite cold store read failed: {exc}") from exc

    def _read_aside(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """A read on the second connection: runs while the main one is busy."""
        with self._reader_lock:
            if self._reader is None:
                raise BackendError("SQLite cold backend is not set up; call setup() first")
            try:
                return self._reader.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise BackendError(f"SQLite cold store read failed: {exc}") from exc

    # -- writes -----------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        closures = [(to_epoch(c.valid_to), c.superseded_by, c.id) for c in changes.closures]
        expiry = [(to_epoch(when), row_id) for row_id, when in changes.expiry]
        inserted = json.dumps([n.record.id for n in changes.inserts])
        with self._tx() as cur:
            cur.executemany(q.CLOSE, closures)
            cur.executemany(q.INSERT, [_row(new) for new in changes.inserts])
            cur.execute(q.FTS_INSERT, (inserted,))
            tagged = json.dumps([n.record.id for n in changes.inserts if n.record.tags])
            cur.execute(q.TAGS_INSERT, (tagged,))
            cur.executemany(q.SET_EXPIRY, expiry)
            rowids = dict(cur.execute(q.ROWIDS_OF, (inserted,)).fetchall()) if self._cache else {}
            self._generation += 1
            self._update_cache(changes, rowids, [(row_id, when) for when, row_id in expiry])

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        with self._tx() as cur:
            rows = cur.execute(*q.erase_sql(prefix, keys)).fetchall()
            self._delete_rows(cur, [(r[0], r[3]) for r in rows])
            self._generation += 1
            self._remove([r[0] for r in rows])
        self._read_aside("PRAGMA shrink_memory")  # no erased page stays in its cache
        return EraseCounts(
            keys=len({(r[1], r[2]) for r in rows}),
            versions=len(rows),
            vectors=sum(1 for r in rows if r[4]),
            keyword_entries=sum(1 for r in rows if r[3]),
        )

    @staticmethod
    def _delete_rows(cur: sqlite3.Cursor, rows: Sequence[tuple[int, str]]) -> None:
        cur.executemany(q.FTS_DELETE, [(rowid, text) for rowid, text in rows if text])
        rowids = json.dumps([rowid for rowid, _ in rows])
        cur.execute(q.TAGS_DELETE, (rowids,))
        cur.execute(q.DELETE_ROWIDS, (rowids,))

    def compact(self) -> bool:
        with self._lock:
            try:
                self.conn.execute(q.FTS_OPTIMIZE)
                self.conn.execute("VACUUM")
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise BackendError(f"SQLite compaction failed: {exc}") from exc
        return True

    def sweep(self, now: datetime) -> int:
        with self._tx() as cur:
            rows = cur.execute(q.EXPIRED, (now.timestamp(),)).fetchall()
            self._delete_rows(cur, [(r[0], r[2]) for r in rows])
            self._generation += 1
            self._remove([r[0] for r in rows])
        return len(rows)

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        blobs = [_blob(v) for v in vectors]
        with self._tx() as cur:
            cur.executemany(
                q.SET_VECTOR, [(b, model_id, i) for b, i in zip(blobs, ids, strict=True)]
            )
            self._generation += 1
            self._invalidate()

    # -- reads ------------------------------------------------------------------------

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        rows = self._read(*q.heads_sql(join_namespace(namespace), keys))
        return {r.key: r for r in map(_record, rows)}

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(*q.fetch_sql(ids))]

    def signals(self, ids: Sequence[str]) -> dict[str, tuple[datetime, float]]:
        return {r[0]: (_dt(r[1]), r[2]) for r in self._read(*q.signals_sql(ids))}

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(*q.scan_sql(scan))]

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.HISTORY, (join_namespace(namespace), key))]

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        return sorted(split_namespace(r[0]) for r in self._read(*q.namespaces_sql(prefix)))

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.STALE, (model_id, limit))]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        terms = keyword_terms(query)
        if not terms:
            return []
        return [r[0] for r in self._read_aside(*q.keyword_sql(scan, q.fts_query(terms), k))]

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        heads = self._matrix(scan, model_id)
        if not heads.count:
            return []
        query = np.asarray(vector, dtype=np.float32)
        rows, sims = heads.nearest.candidates(query, self._mask(scan, heads), k, heads.count)
        ids = [heads.ids[i] for i in rows]
        order = np.lexsort((np.array(ids), -sims))[:k]
        return [(ids[i], float(sims[i])) for i in order]

    def _mask(self, scan: Scan, heads: Heads) -> npt.NDArray[np.bool_] | None:
        """Rows of ``heads`` that ``scan`` admits (None: all of them)."""
        view = scan.view
        mask = None  # loaded with the view already applied, or every row live now
        if view.as_of is None and not view.include_superseded:
            now = view.now.timestamp()
            if not heads.all_live(now, view.include_expired):
                mask = (heads.opens <= now) & (heads.closes > now)
                if not view.include_expired:
                    mask &= heads.expires > now
        if scan.conditions or scan.tags:
            allowed = np.array([r[0] for r in self._read(*q.rowids_sql(scan))], dtype=np.int64)
            listed = np.isin(heads.rowids, allowed)
            mask = listed if mask is None else mask & listed
        return mask

    def _matrix(self, scan: Scan, model_id: str) -> Heads:
        view = scan.view
        if view.as_of is not None or view.include_superseded:
            return self._load(Scan(scan.prefix, view), model_id, with_bounds=False).snapshot()
        self._check_other_writers()
        key = (scan.prefix, model_id)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached.snapshot()
            generation = self._generation
        heads = View(now=view.now, include_expired=True, include_superseded=True)
        loaded = self._load(Scan(scan.prefix, heads), model_id, with_bounds=True)
        with self._lock:
            if generation == self._generation:  # no write since the load began
                self._cache[key] = loaded
                self._trim_cache()
            return loaded.snapshot()

    def _load(self, scan: Scan, model_id: str, *, with_bounds: bool) -> HeadMatrix:
        rows = self._read(*q.vectors_sql(scan, model_id, heads_with_bounds=with_bounds))
        n, dim = len(rows), len(rows[0][2]) // 4 if rows else 1
        room = n + max(1024, n // 4) if with_bounds else n  # a cached matrix grows by writes
        data = bytearray(room * dim * 4)  # writable: erasure zeroes rows
        data[: n * dim * 4] = b"".join(r[2] for r in rows)
        vectors = np.frombuffer(data, dtype=np.float32).reshape(room, dim)
        bounds = np.empty((3, room if with_bounds else 0), np.float64)
        if with_bounds and n:
            bounds[:, :n] = np.array([_bounds(r[3:7]) for r in rows], np.float64).T
        rowids = np.empty(room, dtype=np.int64)
        rowids[:n] = [r[0] for r in rows]
        # only cached matrices are worth an int8 copy (built on their first search)
        quantize_from = self._quantize_from if with_bounds else None
        nearest = NearestRows(vectors, quantize_from=quantize_from, count=n)
        return HeadMatrix([r[1] for r in rows], rowids, nearest, bounds)

    # -- caches -----------------------------------------------------------------------

    def _check_other_writers(self) -> None:
        version = self._read("PRAGMA data_version")[0][0]
        with self._lock:
            if version != self._data_version:
                self._cache.clear()
                self._data_version = version

    def _invalidate(self) -> None:
        with self._lock:
            self._cache.clear()

    def _update_cache(
        self,
        changes: ChangeSet,
        rowids: dict[str, int],
        expiry: Sequence[tuple[str, float | None]],
    ) -> None:
        """Bring every cached matrix up to date with a committed :class:`ChangeSet`."""
        for (prefix, model_id), matrix in list(self._cache.items()):
            matrix.patch(changes.closures, ())
            new = [
                n
                for n in changes.inserts
                if n.vector is not None
                and n.record.embedding_model == model_id
                and n.record.superseded_by is None
                and in_prefix(n.record.namespace, prefix)
            ]
            if new:
                matrix.append(
                    [n.record.id for n in new],
                    np.array([rowids[n.record.id] for n in new], dtype=np.int64),
                    np.array([n.vector for n in new], dtype=np.float32),
                    np.array([_bounds(_epochs(n.record)) for n in new], np.float64).T,
                )
            matrix.patch((), expiry)
        self._drop_worn()
        self._trim_cache()

    def _remove(self, rowids: Sequence[int]) -> None:
        """Erase these rows from every cached matrix (their vectors are zeroed)."""
        if rowids:
            doomed = np.array(rowids, dtype=np.int64)
            for matrix in self._cache.values():
                matrix.remove(doomed)
            self._drop_worn()

    def _drop_worn(self) -> None:
        for key, matrix in list(self._cache.items()):
            if matrix.worn():
                del self._cache[key]

    def _trim_cache(self) -> None:
        """Drop least recently used matrices beyond ``cache_rows`` rows (keeps the newest)."""
        while len(self._cache) > 1 and sum(len(m.ids) for m in self._cache.values()) > (
            self._cache_rows
        ):
            self._cache.popitem(last=False)

    def clear_caches(self) -> int:
        with self._lock:
            count = len(self._cache)
            self._cache.clear()
        return count


def _integrity(exc: sqlite3.IntegrityError) -> StaleWriteError | BackendError:
    """A second head for one key is a conflict with another writer; the rest a failure."""
    if f"{q.TABLE}.ns, {q.TABLE}.key" in str(exc):
        return StaleWriteError(f"another writer changed this memory meanwhile: {exc}")
    return BackendError(f"SQLite cold store write failed: {exc}")


def _bounds(row: Sequence[float | None]) -> tuple[float, float, float]:
    """``(opens, closes, expires)`` of a head from its recorded_at, valid_from, valid_to
    and expires_at (None: never)."""
    recorded, valid_from, valid_to, expires = row
    assert recorded is not None and valid_from is not None
    inf = float("inf")
    return (
        max(recorded, valid_from),
        inf if valid_to is None else valid_to,
        inf if expires is None else expires,
    )


def _epochs(r: MemoryRecord) -> tuple[float | None, ...]:
    return (
        to_epoch(r.recorded_at),
        to_epoch(r.valid_from),
        to_epoch(r.valid_to),
        to_epoch(r.expires_at),
    )


def _blob(vector: npt.NDArray[np.floating]) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


_VALUE_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_TAGS_JSON = json.JSONEncoder(ensure_ascii=False)
_NO_PROVENANCE = Provenance()


def _provenance_json(provenance: Provenance) -> str:
    if provenance == _NO_PROVENANCE:
        return '{"checkpoint_id": null, "message_ids": [], "thread_id": null}'
    return _VALUE_JSON.encode(provenance.to_json())


def _row(new: NewVersion) -> tuple[object, ...]:
    r = new.record
    return (
        r.id,
        join_namespace(r.namespace),
        r.key,
        _VALUE_JSON.encode(dict(r.value)),
        r.text,
        _TAGS_JSON.encode(list(r.tags)) if r.tags else "[]",
        r.source,
        r.sensitivity,
        r.importance,
        to_epoch(r.created_at),
        to_epoch(r.recorded_at),
        to_epoch(r.valid_from),
        to_epoch(r.valid_to),
        to_epoch(r.expires_at),
        r.ttl_seconds,
        _provenance_json(r.provenance),
        r.superseded_by,
        r.embedding_model if new.vector is not None else None,
        None if new.vector is None else _blob(new.vector),
    )


def _record(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(
        id=row[0],
        namespace=split_namespace(row[1]),
        key=row[2],
        value=json.loads(row[3]),
        text=row[4],
        tags=tuple(json.loads(row[5])),
        source=row[6],
        sensitivity=row[7],
        importance=row[8],
        created_at=_dt(row[9]),
        recorded_at=_dt(row[10]),
        valid_from=_dt(row[11]),
        valid_to=from_epoch(row[12]),
        expires_at=from_epoch(row[13]),
        ttl_seconds=row[14],
        provenance=Provenance.from_json(json.loads(row[15])),
        superseded_by=row[16],
        embedding_model=row[17],
    )


def _dt(seconds: float) -> datetime:
    moment = from_epoch(seconds)
    assert moment is not None
    return moment
