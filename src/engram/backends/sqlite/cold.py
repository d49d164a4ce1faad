"""Cold tier on one SQLite file: rows + FTS5 keyword index + float32 vector BLOBs.

Vectors are searched without extensions, exactly, in an on-disk index beside
the database (one per embedding model, see :mod:`~engram.backends.sqlite._index_file`)
that every process maps and shares through the page cache: writes are logged by
triggers in the same transaction, and the index catches up from that log (after
a commit, or at the next search of any process), rewriting only the changed
slots. Searches of the past (``as_of``) or of superseded versions load their rows
from SQLite instead. Keyword searches use a second read-only connection, so a
caller may run them while the vector product runs (both release the GIL).

Inside a transaction (:meth:`SQLiteColdBackend.atomically`) the thread that holds it
reads what it has written so far: its keyword searches run on the writing connection,
and its vector searches add the rows the open transaction changed (listed by the
log, scored exactly) to the index's winners among the rest, so many writes can be
decided one after another in one transaction.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from engram._files import private_file
from engram.backends.sqlite import _cold_sql as q
from engram.backends.sqlite._index_file import (
    DEPTH,
    LAST_SEQ,
    IndexFile,
    existing_models,
)
from engram.backends.sqlite._index_search import IndexSearch, Query
from engram.backends.sqlite._vectors import QUANTIZE_FROM, NearestRows
from engram.backends.sqlite._wal import enable_wal
from engram.errors import BackendError, StaleWriteError
from engram.recall import keyword_text, search_terms, stored_stems
from engram.stores.cold.contract import (
    ChangeSet,
    ColdBackend,
    Excerpt,
    NewVersion,
    Scan,
    Vector,
    successors,
)
from engram.stores.cold.records import (
    NAMESPACE_SEPARATOR,
    EraseCounts,
    MemoryRecord,
    Namespace,
    Provenance,
    from_epoch,
    join_namespace,
    split_namespace,
    to_epoch,
)

SAMPLE = 64
"""Matches read to choose how a keyword search within a prefix runs (:meth:`_scoped`)."""
READ_PER_POSTING = 20
"""Cost of reading a row to test its namespace, in postings of the keyword index merged
(about 3 µs against 0.15 µs measured on a 1M-row store; only the order matters)."""

RANKED_ROUNDS = 3
"""Rounds of :meth:`SQLiteColdBackend._ranked_first` (each takes four times as many
matches as the one before) before it leaves the search to a read of every match."""

BUSY_TIMEOUT_MS = 5000
"""How long a statement waits for another connection's write lock."""
MIGRATION_WAIT_S = 900.0
"""How long :meth:`SQLiteColdBackend.setup` waits for it (another process migrating)."""

PRAGMAS = (
    "PRAGMA synchronous=NORMAL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
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
        approximate_from: int | None = None,
    ) -> None:
        """``approximate_from``: rows from which a search over most of the store takes
        the approximate sign-bit pass of the vector index (None, the default: always
        exact; it starts to pay from about 262,144 rows, ``APPROXIMATE_FROM``)."""
        self._path = Path(path)
        self._quantize_from = quantize_from
        self._approximate_from = approximate_from
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._compact_due = False
        self._depth = 0
        """Open transactions of this connection: 1 inside :meth:`atomically`."""
        self._owner: int | None = None
        """The thread whose transaction is open."""
        self._prune_due = False
        """Whether the open transaction has yet to prune the change log (once each)."""
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        self._vectors: sqlite3.Connection | None = None
        """A third connection, for the vector index (its log and winners): a vector
        search does not wait for a keyword search on the reader."""
        self._vectors_lock = threading.Lock()
        self._indexes: dict[str, IndexSearch] = {}
        """The vector index of each embedding model this process has used."""
        self._cache_rows = cache_rows
        self._written: dict[str, int] = {}
        """Models (and dimensions) of the vectors written by the open transaction."""
        self._winners: dict[str, int] = {}
        """The rowids of the ids the last vector search named (its winners): a recall
        reads their excerpts next, by rowid (by id, an index lookup more each). A hint
        only: every row read by rowid is checked to hold the id asked for."""

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
            with self._migrating(), self._tx() as cur:
                cur.execute(q.VERSION_TABLE)
                done = cur.execute(q.GET_VERSION).fetchone()[0]
                if done > len(q.MIGRATIONS):
                    raise BackendError(
                        f"SQLite cold store {self._path} has schema version {done}, newer "
                        f"than this engram's {len(q.MIGRATIONS)}: upgrade engram to open it"
                    )
                pending = list(enumerate(q.MIGRATIONS, start=1))[done:]
                fills = [v for v, statements in pending if q.FTS_FILLS & set(statements)]
                for version, statements in pending:
                    for statement in statements:
                        if statement not in q.FTS_FILLS or version == fills[-1]:
                            cur.execute(statement)  # (one rebuild of the keyword index)
                    cur.execute(q.SET_VERSION, (version,))
            if self._reader is None:
                self._reader = self._connect()
            if self._vectors is None:
                self._vectors = self._connect()

    @contextmanager
    def _migrating(self) -> Iterator[None]:
        """Wait up to :data:`MIGRATION_WAIT_S` for the write lock: another process may be
        applying a migration (a keyword index rebuilt from a million rows takes a minute),
        and a second server worker starting meanwhile should wait for it, not fail."""
        self.conn.execute(f"PRAGMA busy_timeout={int(MIGRATION_WAIT_S * 1000)}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def _connect(self) -> sqlite3.Connection:
        try:
            private_file(self._path)
            conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            enable_wal(conn)
            for pragma in PRAGMAS:
                conn.execute(pragma)
            conn.create_function(q.KEYWORDS, 1, _keywords, deterministic=True)
            conn.create_function(q.SCOPES, 1, q.scope_text, deterministic=True)
        except (sqlite3.Error, OSError) as exc:
            raise BackendError(f"cannot open SQLite cold store {self._path}: {exc}") from exc
        return conn

    def close(self) -> None:
        with self._lock:
            for index in self._indexes.values():
                index.stop()
                index.file.close()
            self._indexes.clear()
            with self._reader_lock:
                if self._reader is not None:
                    self._reader.close()
                    self._reader = None
            with self._vectors_lock:
                if self._vectors is not None:
                    self._vectors.close()
                    self._vectors = None
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
            self._owner, self._prune_due = threading.get_ident(), True
            try:
                cur.execute("BEGIN IMMEDIATE")
                yield cur
                cur.execute("COMMIT")
                self._after_commit()
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
                self._owner = None
                cur.close()
            if self._compact_due:  # (an erasure inside the transaction, now committed)
                self.compact()

    def _abort(self, cur: sqlite3.Cursor) -> None:
        self._rollback(cur)
        self._written.clear()
        self._compact_due = False

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

    def _mine(self) -> bool:
        """Whether this thread holds the open transaction (so reads see its writes)."""
        return self._owner == threading.get_ident()

    def _read_current(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """A read on the second connection, or on the first for the thread whose
        transaction is open (it sees what that transaction wrote)."""
        return self._read(sql, params) if self._mine() else self._read_aside(sql, params)

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
            self._written.update(
                (n.record.embedding_model, len(n.vector))
                for n in changes.inserts
                if n.vector is not None and n.record.embedding_model
            )
            if self._prune_due:
                self._prune_due = False
                self._prune_log(cur)

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        with self._tx() as cur:
            rows = cur.execute(*q.erase_sql(prefix, keys)).fetchall()
            self._delete_rows(cur, [(r[0], r[1], r[3]) for r in rows])
            if rows:
                cur.execute(q.ERASED, (time.time(),))
        self._shrink()
        return EraseCounts(
            keys=len({(r[1], r[2]) for r in rows}),
            versions=len(rows),
            vectors=sum(1 for r in rows if r[4]),
            keyword_entries=sum(1 for r in rows if r[3]),
        )

    @staticmethod
    def _delete_rows(cur: sqlite3.Cursor, rows: Sequence[tuple[int, str, str]]) -> None:
        """Delete the rows ``(rowid, ns, text)``, with their index entries."""
        cur.executemany(q.FTS_DELETE, [(rowid, text, ns) for rowid, ns, text in rows if text])
        rowids = json.dumps([rowid for rowid, _, _ in rows])
        cur.execute(q.TAGS_DELETE, (rowids,))
        cur.execute(q.DELETE_ROWIDS, (rowids,))

    def compact(self) -> bool:
        """FTS merge, VACUUM and WAL truncation; inside :meth:`atomically` (where SQLite
        cannot VACUUM) it runs when the transaction commits, and returns False now."""
        with self._lock:
            if self._depth:
                self._compact_due = True
                return False
            self._compact_due = False
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
            self._delete_rows(cur, [(r[0], r[1], r[2]) for r in rows])
            links = successors({r[3]: r[4] for r in rows})
            cur.executemany(q.RELINK, [(links[r[3]], r[1], r[5], r[3]) for r in rows])
        return len(rows)

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        blobs = [_blob(v) for v in vectors]
        with self._tx() as cur:
            cur.executemany(
                q.SET_VECTOR, [(b, model_id, i) for b, i in zip(blobs, ids, strict=True)]
            )
            if blobs:
                self._written[model_id] = len(blobs[0]) // 4

    # -- reads ------------------------------------------------------------------------

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        rows = self._read(*q.heads_sql(join_namespace(namespace), keys))
        return {r.key: r for r in map(_record, rows)}

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(*q.fetch_sql(ids))]

    def signals(self, ids: Sequence[str]) -> dict[str, tuple[datetime, float]]:
        return {r[0]: (_dt(r[1]), r[2]) for r in self._read(*q.signals_sql(ids))}

    def excerpts(self, ids: Sequence[str]) -> dict[str, Excerpt]:
        named = self._winners
        rowids = [r for i in ids if (r := named.get(i)) is not None]
        found: dict[str, Excerpt] = {}
        if rowids:
            wanted = set(ids)
            rows = self._read(*q.excerpts_sql(rowids, by_rowid=True))
            found = {r[0]: _excerpt(r) for r in rows if r[0] in wanted}
        rest = [i for i in ids if i not in found] if found else ids
        if rest:
            found.update((r[0], _excerpt(r)) for r in self._read(*q.excerpts_sql(rest)))
        return found

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(*q.scan_sql(scan))]

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.HISTORY, (join_namespace(namespace), key))]

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        return sorted(split_namespace(r[0]) for r in self._read(*q.namespaces_sql(prefix)))

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        return [_record(r) for r in self._read(q.STALE, (model_id, limit))]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        terms = search_terms(query)
        if not terms or k <= 0:
            return []
        match = q.fts_query(terms)
        scoped = self._scoped(scan.prefix, match)
        if scoped:
            match = q.fts_query(terms, scope=scan.prefix)
        elif scoped is not None and (best := self._ranked_first(scan, match, k)) is not None:
            return best
        return [r[0] for r in self._read_current(*q.keyword_sql(scan, match, k))]

    def _ranked_first(self, scan: Scan, match: str, k: int) -> list[str] | None:
        """The best ``k`` of :meth:`keyword_candidates` for a search over most of the
        store: the index ranks every match without reading a row, and only the best
        ones are read to test them against ``scan``; more are taken while fewer than
        ``k`` pass. None when even the last round leaves fewer (a selective filter):
        the caller then reads every match instead.

        The same rows, in the same order, as :func:`~._cold_sql.keyword_sql`: both
        order by rank, then rowid, so the best ``k`` that pass are the best ``k`` of
        the passing rows among the best ``wanted``."""
        wanted = 2 * k + 16
        for _ in range(RANKED_ROUNDS):
            ranked = self._read_current(q.RANKED, (match, wanted))
            rank = {rowid: score for rowid, score in ranked}
            ids = self._read_current(*q.admitted_sql(scan, list(rank)))
            best = sorted((rank[rowid], rowid, i) for rowid, i in ids)[:k]
            if len(best) == k or len(ranked) < wanted:
                return [i for _, _, i in best]
            wanted *= 4
        return None

    def _scoped(self, prefix: Namespace, match: str) -> bool | None:
        """Whether a keyword search within ``prefix`` should let the index intersect the
        matches with the prefix's scope token (cost in proportion to the prefix's rows
        plus the matches) rather than test the namespace of every match (a row read
        each, about :data:`READ_PER_POSTING` times a posting's cost).

        Decided from the first :data:`SAMPLE` matches in rowid order: ``inside`` of
        them lie in the prefix, and the last has rowid ``last``. Rowids being about
        dense, a store of ``N`` rows holds about ``SAMPLE * N / last`` matches and the
        prefix about ``inside / SAMPLE * N`` rows; the scope pays when its postings
        cost less than the reads it saves (the matches outside the prefix):
        ``inside * last < READ_PER_POSTING * SAMPLE * (SAMPLE - inside)``. None when
        the query has fewer matches than that: one read of every match is then the
        cheapest way. Either way the results are the same; only the cost differs."""
        if not prefix:
            return False
        rows = self._read_current(q.FIRST_MATCHES, (match, SAMPLE))
        if len(rows) < SAMPLE:  # few matches: testing each costs little
            return None
        joined = join_namespace(prefix)
        below = joined + NAMESPACE_SEPARATOR
        inside = sum(1 for _, ns in rows if ns == joined or ns.startswith(below))
        last = rows[-1][0]
        return bool(inside * last < READ_PER_POSTING * SAMPLE * (SAMPLE - inside))

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        query = np.asarray(vector, dtype=np.float32)
        view = scan.view
        if view.as_of is not None or view.include_superseded:
            return self._loaded_candidates(scan, query, model_id, k)
        index = self._index(model_id, len(query))
        self._catch_up(index)
        with self._vectors_lock:
            index.refresh(self._vectors)
        changed = self._uncommitted(index) if self._mine() else []
        wanted = k + len(changed)  # the index's winners may include rows changed since
        allowed = None if _hashed(scan) else self._allowed(scan)
        found = self._indexed(index, scan, query, wanted, allowed)
        if found is None:  # a row changed meanwhile (or a hash collided): ask SQLite
            self._catch_up(index)
            with self._vectors_lock:
                index.refresh(self._vectors)
            found = self._indexed(index, scan, query, wanted, self._allowed(scan)) or []
        return self._with_uncommitted(found, changed, scan, query, model_id, k)

    def _uncommitted(self, index: IndexSearch) -> list[int]:
        """Rowids the open transaction changed: logged after what the index holds."""
        head = index.file.header()
        rows = self._read(q.LOGGED_AFTER, (0 if head is None else head[0],))
        return [r[0] for r in rows]

    def _with_uncommitted(
        self,
        found: list[tuple[str, float]],
        changed: list[int],
        scan: Scan,
        query: npt.NDArray[np.float32],
        model_id: str,
        k: int,
    ) -> list[tuple[str, float]]:
        """The top ``k`` of ``found`` (the index's, committed rows) once the rows the
        open transaction changed are taken out of it and scored as they are now."""
        if not changed:
            return found[:k]
        rowids = json.dumps(changed)
        with self._vectors_lock:
            assert self._vectors is not None
            stale = {r[1] for r in self._vectors.execute(q.IDS_OF_ROWIDS, (rowids,))}
        sql, params = q.vectors_sql(scan, model_id)
        rows = self._read(f"{sql} AND {q.ROWID_IN}", (*params, rowids))
        kept = [(i, sim) for i, sim in found if i not in stale]
        kept += _scored(rows, query)
        kept.sort(key=lambda pair: (-pair[1], pair[0]))
        return kept[:k]

    def cosines(
        self, scan: Scan, ids: Sequence[str], vector: Vector, model_id: str
    ) -> dict[str, float]:
        if not ids:
            return {}
        query = np.asarray(vector, dtype=np.float32)
        return dict(_scored(self._read_current(*q.vectors_of_sql(scan, model_id, ids)), query))

    def _indexed(
        self,
        index: IndexSearch,
        scan: Scan,
        query: npt.NDArray[np.float32],
        k: int,
        allowed: npt.NDArray[np.int64] | None,
    ) -> list[tuple[str, float]] | None:
        """The top ``k`` of the index, or None when a winner is no longer what the
        index says (gone, or outside the prefix)."""
        if allowed is None:
            allowed = index.prefix_rows(scan.prefix)
        view = scan.view
        search = Query(query, allowed, view.now.timestamp(), view.include_expired, k)
        slots, sims = index.nearest(search)
        if not len(slots):
            return []
        sure, tied, need = _at_kth(sims, k)
        found = self._named(slots[sure], sims[sure], None, scan.prefix)
        if need:
            kth = sims[tied[:1]]
            chosen = self._named(slots[tied], kth, need, scan.prefix, index.high)
            found = None if found is None or chosen is None else found + chosen
        if found is None:
            return None
        ids = [i for i, _ in found]
        scores = np.array([sim for _, sim in found], dtype=np.float32)
        order = np.lexsort((np.array(ids), -scores))[:k]
        return [found[i] for i in order.tolist()]

    def _named(
        self,
        slots: npt.NDArray[np.int64],
        sims: npt.NDArray[np.float32],
        limit: int | None,
        prefix: Namespace,
        high: int = 0,
    ) -> list[tuple[str, float]] | None:
        """``(id, score)`` of ``slots`` (in order; with ``limit``: the ``limit`` smallest
        ids of slots that all score ``sims[0]``, among ``high`` rowids), or None when one
        is gone or outside ``prefix`` (the index is behind SQLite)."""
        with self._vectors_lock:
            assert self._vectors is not None
            if limit is None:
                rows = self._vectors.execute(q.IDS_OF_ROWIDS, (_json(slots),)).fetchall()
            else:
                rows = _least_ids(self._vectors, slots, limit, high)
        inside = _prefix_test(prefix)
        if len(rows) < (len(slots) if limit is None else limit):
            return None
        if not all(inside(r[2]) for r in rows):
            return None
        if limit is not None:
            score = float(sims[0])
            return [(r[1], score) for r in rows]
        named = {r[0]: r[1] for r in rows}
        self._winners = {r[1]: r[0] for r in rows}
        return [
            (named[s], float(sim)) for s, sim in zip(slots.tolist(), sims.tolist(), strict=True)
        ]

    def _allowed(self, scan: Scan) -> npt.NDArray[np.int64]:
        """Slots (rowids) of the versions ``scan`` admits, from SQLite."""
        return np.array([r[0] for r in self._read_current(*q.rowids_sql(scan))], dtype=np.int64)

    def _loaded_candidates(
        self, scan: Scan, query: npt.NDArray[np.float32], model_id: str, k: int
    ) -> list[tuple[str, float]]:
        """Search of the past or of superseded versions: rows loaded from SQLite."""
        rows = self._read(*q.vectors_sql(Scan(scan.prefix, scan.view), model_id))
        if not rows:
            return []
        mask = None
        if scan.conditions or scan.tags:
            mask = np.isin(np.array([r[0] for r in rows]), self._allowed(scan))
        vectors = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1)
        found, sims = NearestRows(vectors, quantize_from=None).candidates(query, mask, k)
        ids = [rows[i][1] for i in found]
        order = np.lexsort((np.array(ids), -sims))[:k]
        return [(ids[i], float(sims[i])) for i in order]

    # -- the vector index -------------------------------------------------------------

    def _index(self, model_id: str, dim: int) -> IndexSearch:
        with self._lock:
            index = self._indexes.get(model_id)
            if index is None or index.file.dim != dim:
                if index is not None:
                    index.stop()
                    index.file.close()
                file = IndexFile(self._path, model_id, dim)
                index = IndexSearch(
                    file, self._quantize_from, self._cache_rows * 4, self._approximate_from
                )
                self._indexes[model_id] = index
            return index

    def _catch_up(self, index: IndexSearch) -> None:
        """Bring ``index``'s files up to SQLite (a no-op when they are current)."""
        with self._vectors_lock:
            if self._vectors is None:
                raise BackendError("SQLite cold backend is not set up; call setup() first")
            head = index.file.header()
            if head is not None and head[0] == self._vectors.execute(LAST_SEQ).fetchone()[0]:
                return
            index.file.sync(self._vectors)

    def _after_commit(self) -> None:
        """Apply a commit to every index beside the database (erased vectors leave
        each file now), and create the index of a model written for the first time."""
        if self._vectors is None:  # setup's migrations: the indexes follow at first use
            return
        models = dict(existing_models(self._path))
        models.update(self._written)
        self._written.clear()
        for model_id, dim in models.items():
            self._catch_up(self._index(model_id, dim))

    def _prune_log(self, cur: sqlite3.Cursor) -> None:
        """Drop change-log entries every index applied long ago (kept: the last
        :data:`LOG_KEPT`, for processes that looked at the index before)."""
        seqs = [IndexFile(self._path, m, d).header() for m, d in existing_models(self._path)]
        applied = [h[0] for h in seqs if h is not None]
        last = cur.execute(LAST_SEQ).fetchone()[0]
        floor = min(applied, default=last) - LOG_KEPT
        if floor > 0:
            cur.execute(q.PRUNE_LOG, (floor,))

    def clear_caches(self) -> int:
        with self._lock:
            count = sum(index.cached() for index in self._indexes.values())
            for index in self._indexes.values():
                index.forget_caches()
        self._shrink()
        return count

    def erasures(self) -> int:
        return int(self._read_aside(q.LAST_ERASURE)[0][0])

    def _shrink(self) -> None:
        """Both connections release their page caches (no erased page stays in them)."""
        self._read("PRAGMA shrink_memory")
        self._read_aside("PRAGMA shrink_memory")


LOG_KEPT = 65536
"""Change-log entries kept behind the oldest index (a process that looked at the
index fewer writes ago patches its state; an older one starts over)."""


def _hashed(scan: Scan) -> bool:
    """Whether the index alone selects ``scan``'s rows (prefix hashes, no filter)."""
    return len(scan.prefix) <= DEPTH and not scan.conditions and not scan.tags


def _at_kth(
    sims: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Positions of the scores above the ``k``-th best, of those equal to it, and how
    many of the equal ones the best ``k`` take (0 when all ``k`` or fewer are above:
    then the first holds every position)."""
    if len(sims) <= k:
        return np.arange(len(sims)), np.arange(0), 0
    kth = np.partition(sims, len(sims) - k)[len(sims) - k]
    above = np.flatnonzero(sims > kth)
    return above, np.flatnonzero(sims == kth), k - len(above)


def _scored(rows: Sequence[Any], query: npt.NDArray[np.float32]) -> list[tuple[str, float]]:
    """``(id, score)`` of ``(rowid, id, vector)`` rows, scored as the index scores its
    winners: float64 products, rounded to float32."""
    if not rows:
        return []
    vectors = np.frombuffer(b"".join(r[2] for r in rows), np.float32)
    vectors = vectors.reshape(len(rows), -1).astype(np.float64)
    sims = (vectors @ query.astype(np.float64)).astype(np.float32)
    return [(row[1], float(sim)) for row, sim in zip(rows, sims, strict=True)]


def _prefix_test(prefix: Namespace) -> Callable[[str], bool]:
    """Whether a stored namespace lies under ``prefix`` (``in_prefix`` of the split
    labels, on the joined string: labels never hold the separator)."""
    if not prefix:
        return lambda stored: True
    joined = join_namespace(prefix)
    below = joined + NAMESPACE_SEPARATOR
    return lambda stored: stored == joined or stored.startswith(below)


def _least_ids(
    conn: sqlite3.Connection, slots: npt.NDArray[np.int64], limit: int, high: int
) -> list[Any]:
    """``(rowid, id, ns)`` of the ``limit`` smallest ids among the rowids ``slots``, in id
    order. When the slots are a large share of the ``high`` rowids (many rows tie), the
    id index is walked in order until ``limit`` of them are met (about
    ``limit * high / len(slots)`` entries) instead of reading and sorting every slot's row."""
    if limit * high >= len(slots) ** 2:
        return conn.execute(q.LEAST_IDS_OF_ROWIDS, (_json(slots), limit)).fetchall()
    wanted = np.zeros(int(slots.max()) + 1, np.bool_)  # (a mask: no set of every slot)
    wanted[slots] = True
    least: list[int] = []
    walk = conn.execute(q.ROWIDS_BY_ID)
    try:
        step = limit * high // len(slots) + limit  # the expected walk, and some
        while len(least) < limit and (batch := walk.fetchmany(step)):
            rowids = np.fromiter((r[0] for r in batch), np.int64, len(batch))
            inside = rowids[(rowids >= 0) & (rowids < len(wanted))]
            least += inside[wanted[inside]].tolist()
    finally:
        walk.close()
    chosen = json.dumps(least[:limit])
    return conn.execute(q.IDS_OF_ROWIDS_BY_ID, (chosen,)).fetchall()


def _json(slots: npt.NDArray[np.int64]) -> str:
    return json.dumps(slots.tolist())


def _integrity(exc: sqlite3.IntegrityError) -> StaleWriteError | BackendError:
    """A second head for one key is a conflict with another writer; the rest a failure."""
    if f"{q.TABLE}.ns, {q.TABLE}.key" in str(exc):
        return StaleWriteError(f"another writer changed this memory meanwhile: {exc}")
    return BackendError(f"SQLite cold store write failed: {exc}")


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
        stored_stems(r.text),
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


def _excerpt(row: Sequence[Any]) -> Excerpt:
    recorded_at = datetime.fromtimestamp(row[4], UTC)  # (from_epoch of a NOT NULL column)
    valid_from = recorded_at if row[3] == row[4] else _dt(row[3])  # most became valid then
    return Excerpt(row[0], row[1], _value(row[2]), valid_from, recorded_at, row[5], row[6])


_LONG_NUMBER = re.compile(r"\d{19}")
"""A run of digits that may be an integer beyond 64 bits: orjson reads one as a float."""


def _value(text: str) -> Any:
    """A stored value, parsed by orjson (several times faster on recall's pool of small
    values) or, for what orjson refuses (NaN written by earlier versions) or reads as a
    float (integers beyond 64 bits), the standard library."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _dt(seconds: float) -> datetime:
    moment = from_epoch(seconds)
    assert moment is not None
    return moment
