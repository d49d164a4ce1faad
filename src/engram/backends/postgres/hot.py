"""Hot tier on PostgreSQL: LangGraph's own ``PostgresSaver`` / ``AsyncPostgresSaver``.

Two additions around LangGraph's savers:

- with encryption on, the ``Sealed*`` savers route every channel value
  through the serializer: stock ``PostgresSaver`` stores primitive channel
  values (str, int, float, bool) inline in the ``checkpoints.checkpoint``
  JSONB column, where an ``EncryptedSerializer`` never sees them;
- statements for listing threads by owner, storage sizes and retention,
  run by :class:`PostgresAdmin` on the saver's own connection. Retention reuses
  LangGraph's prune building blocks (snapshot isolation, the DeltaChannel
  check, the blob reference query) with "keep the last N" instead of
  "keep the latest".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)

from engram._principal import Principal
from engram.config import StoreURL
from engram.errors import BackendError, ConfigError, ConflictError, MissingDependencyError
from engram.stores.hot.contract import (
    AsyncOwnedSaver,
    OwnedSaver,
    PruneReport,
    R,
    SaverOptions,
    Statements,
    ThreadInfo,
    ThreadSize,
    adrive,
    drive,
    is_stale_call,
    mark_owners_ready,
    owner_params,
    owners_ready,
)
from engram.stores.hot.serde import Sealed

try:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.postgres.base import (
        PRUNE_DELTA_THREADS_SQL,
        PRUNE_REFERENCED_BLOBS_SQL,
        PRUNE_SNAPSHOT_SQL,
    )
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool, ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

# Who owns each thread: fixed by its first scoped checkpoint, never by a later one.
OWNERS_SETUP_SQL = (
    """CREATE TABLE IF NOT EXISTS engram_thread_owners (
        thread_id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )""",
    # Threads written before owners were recorded: the owner their first root checkpoint names.
    """INSERT INTO engram_thread_owners (thread_id, tenant_id, user_id)
    SELECT thread_id, tenant_id, user_id FROM (
        SELECT DISTINCT ON (thread_id) thread_id, metadata ->> 'tenant_id' AS tenant_id,
               metadata ->> 'user_id' AS user_id
        FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id
    ) AS first WHERE tenant_id IS NOT NULL AND user_id IS NOT NULL
    ON CONFLICT DO NOTHING""",
)

OWNER_OF_SQL = "SELECT tenant_id, user_id FROM engram_thread_owners WHERE thread_id = %(thread)s"
CLAIM_SQL = """
INSERT INTO engram_thread_owners (thread_id, tenant_id, user_id)
VALUES (%(thread)s, %(tenant)s, %(user)s) ON CONFLICT DO NOTHING
"""

OWNER_SQL = (
    "(%(tenant)s::text IS NULL OR thread_id IN (SELECT thread_id FROM engram_thread_owners"
    " WHERE tenant_id = %(tenant)s AND (%(user)s::text IS NULL OR user_id = %(user)s)))"
)

LIST_THREADS_SQL = f"""
SELECT c.thread_id, count(*) AS checkpoints, max(c.checkpoint_id) AS last_checkpoint_id,
       min(o.tenant_id) AS tenant_id, min(o.user_id) AS user_id
FROM checkpoints c LEFT JOIN engram_thread_owners o ON o.thread_id = c.thread_id
WHERE c.checkpoint_ns = '' AND {OWNER_SQL.replace("thread_id IN", "c.thread_id IN", 1)}
GROUP BY c.thread_id
ORDER BY last_checkpoint_id DESC
"""

# Stored sizes (pg_column_size: after TOAST compression), so growth is what the disk sees.
SIZE_CHECKPOINTS_SQL = f"""
SELECT thread_id, count(*) AS n,
       coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) AS bytes
FROM checkpoints
WHERE (%(threads)s::text[] IS NULL OR thread_id = ANY(%(threads)s)) AND {OWNER_SQL}
GROUP BY thread_id ORDER BY thread_id
"""

SIZE_WRITES_SQL = """
SELECT thread_id, count(*) AS n, coalesce(sum(pg_column_size(blob)), 0) AS bytes
FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s) GROUP BY thread_id
"""

SIZE_BLOBS_SQL = """
SELECT thread_id, count(*) AS n, coalesce(sum(pg_column_size(blob)), 0) AS bytes
FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s) GROUP BY thread_id
"""

PRUNE_NAMESPACES_SQL = "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s"

PRUNE_CUTOFF_SQL = """
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s
ORDER BY checkpoint_id DESC LIMIT 1 OFFSET %s
"""

PRUNE_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s
RETURNING 1
"""

# The channel versions the deleted checkpoints referenced: candidates for blob removal.
PRUNE_CHECKPOINTS_SQL = """
WITH deleted AS (
    DELETE FROM checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s
    RETURNING checkpoint_id, checkpoint -> 'channel_versions' AS versions
)
SELECT deleted.checkpoint_id, v.key AS channel, v.value AS version
FROM deleted LEFT JOIN LATERAL jsonb_each_text(deleted.versions) AS v ON true
"""

PRUNE_PARENTS_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id < %s
"""

PRUNE_BLOBS_SQL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)
RETURNING 1
"""

# The root checkpoint a subgraph call's namespace started from.
PRUNE_CALL_ROOT_SQL = """
SELECT metadata -> 'parents' ->> '' AS root FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s
ORDER BY checkpoint_id DESC LIMIT 1
"""

PRUNE_CALL_SQL = tuple(
    f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = %s RETURNING 1"
    for table in ("checkpoint_writes", "checkpoints", "checkpoint_blobs")
)

COUNT_KEPT_SQL = "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s"

COPY_THREAD_SQL = (
    """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
        type, checkpoint, metadata)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
        metadata
    FROM checkpoints WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
    """INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(target)s, checkpoint_ns, channel, version, type, blob
    FROM checkpoint_blobs WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
    """INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,
        idx, channel, type, blob)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
    FROM checkpoint_writes WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
    """INSERT INTO engram_thread_owners (thread_id, tenant_id, user_id)
    SELECT %(target)s, tenant_id, user_id FROM engram_thread_owners
    WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
)

DELETE_RUNS_SQL = """
DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)
RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
"""

DELETE_RUN_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "engram_thread_owners")

DELETE_THREADS_SQL = tuple(f"DELETE FROM {table} WHERE thread_id = ANY(%s)" for table in TABLES)

# Rewrites each table and its TOAST table into new files, so deleted rows leave no bytes
# (ACCESS EXCLUSIVE lock while it runs); cannot run inside a transaction block.
VACUUM_SQL = f"VACUUM (FULL, ANALYZE) {', '.join(TABLES)}"

_PRIMITIVES = (str, int, float, bool)


# --- savers -------------------------------------------------------------------------


def seal(
    checkpoint: Checkpoint, new_versions: ChannelVersions
) -> tuple[Checkpoint, ChannelVersions]:
    """Wrap primitive channel values so the saver stores them as (encrypted) blobs.

    A sealed channel's blob is (re)written under its current version; the
    blob upsert ignores versions already stored.
    """
    values = dict(checkpoint["channel_values"])
    versions = dict(new_versions)
    for key, value in checkpoint["channel_values"].items():
        version = checkpoint["channel_versions"].get(key)
        if (value is None or isinstance(value, _PRIMITIVES)) and version is not None:
            values[key] = Sealed(value)
            versions.setdefault(key, version)
    return {**checkpoint, "channel_values": values}, versions


class EngramPostgresSaver(OwnedSaver, PostgresSaver):
    """LangGraph's ``PostgresSaver`` with thread owners (:class:`OwnedSaver`) plus the
    ``copy_thread`` / ``delete_for_runs`` it lacks."""

    def owner_admin(self) -> PostgresAdmin:
        return PostgresAdmin(self)

    def delete_thread(self, thread_id: str) -> None:
        PostgresAdmin(self).run(delete_threads_by_id([thread_id]), write=True)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        PostgresAdmin(self).run(copy_thread(source_thread_id, target_thread_id), write=True)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        PostgresAdmin(self).run(delete_for_runs(run_ids), write=True)


class AsyncEngramPostgresSaver(AsyncOwnedSaver, AsyncPostgresSaver):
    """``AsyncPostgresSaver`` with the same additions as :class:`EngramPostgresSaver`."""

    def owner_admin(self) -> PostgresAdmin:
        return PostgresAdmin(self)

    async def adelete_thread(self, thread_id: str) -> None:
        await PostgresAdmin(self).arun(delete_threads_by_id([thread_id]), write=True)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await PostgresAdmin(self).arun(copy_thread(source_thread_id, target_thread_id), write=True)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await PostgresAdmin(self).arun(delete_for_runs(run_ids), write=True)


class SealedPostgresSaver(EngramPostgresSaver):
    """``PostgresSaver`` that keeps no channel value inline (for encryption at rest)."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return super().put(config, *_sealed_args(checkpoint, metadata, new_versions))


class AsyncSealedPostgresSaver(AsyncEngramPostgresSaver):
    """``AsyncPostgresSaver`` that keeps no channel value inline (for encryption at rest)."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await super().aput(config, *_sealed_args(checkpoint, metadata, new_versions))


def _sealed_args(
    checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
) -> tuple[Checkpoint, CheckpointMetadata, ChannelVersions]:
    sealed, versions = seal(checkpoint, new_versions)
    return sealed, metadata, versions


def _connect_kwargs() -> dict[str, Any]:
    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@contextmanager
def _opening() -> Iterator[None]:
    """Driver errors while connecting or setting up become one :class:`BackendError`."""
    try:
        yield
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL hot tier unavailable: {exc}") from exc


@contextmanager
def open_sync(url: StoreURL, options: SaverOptions) -> Iterator[PostgresSaver]:
    """LangGraph's ``PostgresSaver`` on ``url``, set up (sealed when ``options`` say so)."""
    cls = SealedPostgresSaver if options.sealed else EngramPostgresSaver
    with _opening():
        conn = Connection.connect(url.dsn, **_connect_kwargs())
    with conn:
        saver = cls(conn, serde=options.serde)
        with _opening():
            saver.setup()
        yield saver


@asynccontextmanager
async def open_async(url: StoreURL, options: SaverOptions) -> AsyncIterator[AsyncPostgresSaver]:
    """LangGraph's ``AsyncPostgresSaver`` on ``url``, set up (sealed when asked)."""
    cls = AsyncSealedPostgresSaver if options.sealed else AsyncEngramPostgresSaver
    with _opening():
        conn = await AsyncConnection.connect(url.dsn, **_connect_kwargs())
    async with conn:
        saver = cls(conn, serde=options.serde)
        with _opening():
            await saver.setup()
        yield saver


def admin_for(saver: BaseCheckpointSaver[Any]) -> PostgresAdmin | None:
    """The admin of a LangGraph PostgreSQL saver (sync or async), else ``None``."""
    return PostgresAdmin(saver) if isinstance(saver, PostgresSaver | AsyncPostgresSaver) else None


# --- statements ---------------------------------------------------------------------


def setup_owners() -> Statements[None]:
    for sql in OWNERS_SETUP_SQL:
        yield sql, (), False


def owner(thread_id: str) -> Statements[Principal | None]:
    rows = yield OWNER_OF_SQL, {"thread": thread_id}, True
    return Principal(rows[0]["tenant_id"], rows[0]["user_id"]) if rows else None


def claim(thread_id: str, principal: Principal) -> Statements[Principal]:
    yield CLAIM_SQL, {"thread": thread_id, **owner_params(principal)}, False
    found = yield from owner(thread_id)
    assert found is not None
    return found


def delete_threads_by_id(thread_ids: Sequence[str]) -> Statements[None]:
    for sql in DELETE_THREADS_SQL:
        yield sql, (list(thread_ids),), False


def list_threads(owner: Principal | None) -> Statements[list[ThreadInfo]]:
    rows = yield LIST_THREADS_SQL, owner_params(owner), True
    return [
        ThreadInfo(
            r["thread_id"], r["tenant_id"], r["user_id"], r["checkpoints"], r["last_checkpoint_id"]
        )
        for r in rows
    ]


def sizes(
    thread_ids: Sequence[str] | None, owner: Principal | None
) -> Statements[list[ThreadSize]]:
    threads = None if thread_ids is None else list(thread_ids)
    found = yield SIZE_CHECKPOINTS_SQL, {"threads": threads, **owner_params(owner)}, True
    ids = {"threads": [r["thread_id"] for r in found]}
    writes = _by_thread((yield SIZE_WRITES_SQL, ids, True))
    blobs = _by_thread((yield SIZE_BLOBS_SQL, ids, True))
    return [
        ThreadSize(
            r["thread_id"], r["n"], writes.get(r["thread_id"], (0, 0))[0],
            blobs.get(r["thread_id"], (0, 0))[0], r["bytes"],
            writes.get(r["thread_id"], (0, 0))[1], blobs.get(r["thread_id"], (0, 0))[1],
        )
        for r in found
    ]  # fmt: skip


def _by_thread(rows: list[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    return {r["thread_id"]: (int(r["n"]), int(r["bytes"])) for r in rows}


def prune(thread_id: str, keep_last: int) -> Statements[PruneReport]:
    """Keep the newest ``keep_last`` checkpoints of each namespace, their writes and blobs.

    Subgraph call namespaces whose root checkpoint goes are deleted whole. One
    REPEATABLE READ transaction, like LangGraph's own prune: a run that
    appends meanwhile is neither seen nor deleted.
    """
    yield PRUNE_SNAPSHOT_SQL, (), False
    if (yield PRUNE_DELTA_THREADS_SQL, ([thread_id], [thread_id]), True):
        raise ConflictError(f"thread {thread_id!r} uses a DeltaChannel; pruning would lose state")
    counts = [0, 0, 0]  # writes, checkpoints, blobs
    root_cutoff: str | None = None
    rows = yield PRUNE_NAMESPACES_SQL, (thread_id,), True
    for ns in sorted(r["checkpoint_ns"] for r in rows):
        root = (yield PRUNE_CALL_ROOT_SQL, (thread_id, ns), True)[0]["root"] if ns else None
        if is_stale_call(ns, root, root_cutoff):
            for i, sql in enumerate(PRUNE_CALL_SQL):
                counts[i] += len((yield sql, (thread_id, ns), True))
            continue
        cutoff = yield PRUNE_CUTOFF_SQL, (thread_id, ns, keep_last - 1), True
        if cutoff:
            root_cutoff = root_cutoff if ns else cutoff[0]["checkpoint_id"]
            found = yield from _prune_namespace((thread_id, ns, cutoff[0]["checkpoint_id"]))
            counts = [a + b for a, b in zip(counts, found, strict=True)]
    kept = yield COUNT_KEPT_SQL, (thread_id,), True
    return PruneReport(thread_id, kept[0]["n"], counts[1], counts[0], counts[2])


def _prune_namespace(bound: tuple[str, str, str]) -> Statements[list[int]]:
    """Delete checkpoints older than the cutoff in one namespace: [writes, checkpoints, blobs]."""
    thread_id, ns, _ = bound
    writes = len((yield PRUNE_WRITES_SQL, bound, True))
    freed = yield PRUNE_CHECKPOINTS_SQL, bound, True
    yield PRUNE_PARENTS_SQL, bound, False
    referenced = yield PRUNE_REFERENCED_BLOBS_SQL, (thread_id, ns), True
    blobs = 0
    for channel, versions in _garbage(freed, referenced).items():
        blobs += len((yield PRUNE_BLOBS_SQL, (thread_id, ns, channel, versions), True))
    return [writes, len({r["checkpoint_id"] for r in freed}), blobs]


def delete_threads(owner: Principal) -> Statements[list[str]]:
    """Delete every thread :func:`list_threads` finds for ``owner``, whole (every
    namespace, pending writes, blobs); returns their ids, newest first."""
    found = [t.thread_id for t in (yield from list_threads(owner))]
    yield from delete_threads_by_id(found)
    return found


def copy_thread(source: str, target: str) -> Statements[None]:
    for sql in COPY_THREAD_SQL:
        yield sql, {"source": source, "target": target}, False


def delete_for_runs(run_ids: Sequence[str]) -> Statements[None]:
    """Delete the runs' checkpoints, their writes, and blobs no remaining checkpoint uses."""
    deleted = yield DELETE_RUNS_SQL, ([str(r) for r in run_ids],), True
    scopes: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in deleted:
        scopes.setdefault((row["thread_id"], row["checkpoint_ns"]), []).append(row)
    for (thread_id, ns), rows in scopes.items():
        ids = [r["checkpoint_id"] for r in rows]
        yield DELETE_RUN_WRITES_SQL, (thread_id, ns, ids), False
        freed = [
            {"channel": c, "version": str(v)}
            for r in rows
            for c, v in (r["versions"] or {}).items()
        ]
        referenced = yield PRUNE_REFERENCED_BLOBS_SQL, (thread_id, ns), True
        for channel, versions in _garbage(freed, referenced).items():
            yield PRUNE_BLOBS_SQL, (thread_id, ns, channel, versions), True


def _garbage(
    freed: Sequence[Mapping[str, Any]], referenced: Sequence[Mapping[str, Any]]
) -> dict[str, list[str]]:
    """Blob versions only deleted checkpoints used, by channel."""
    kept = {(r["channel"], r["version"]) for r in referenced}
    garbage: dict[str, set[str]] = {}
    for r in freed:
        if r["channel"] is not None and (r["channel"], r["version"]) not in kept:
            garbage.setdefault(r["channel"], set()).add(r["version"])
    return {channel: sorted(versions) for channel, versions in garbage.items()}


# --- running them -------------------------------------------------------------------


class PostgresAdmin:
    """Runs hot-tier statements in one transaction on a LangGraph Postgres saver's connection."""

    list_threads = staticmethod(list_threads)
    owner = staticmethod(owner)
    claim = staticmethod(claim)
    sizes = staticmethod(sizes)
    prune = staticmethod(prune)
    delete_threads = staticmethod(delete_threads)

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self._saver = saver

    def compact(self) -> bool:
        """``VACUUM FULL`` the checkpoint tables (see :data:`VACUUM_SQL`)."""
        saver = self._saver
        if not isinstance(saver, PostgresSaver):
            raise ConfigError("this PostgreSQL saver is async: use AsyncThreads")
        with saver.lock, _connection(saver.conn) as conn:
            _require_autocommit(conn.autocommit)
            try:
                conn.execute(VACUUM_SQL, prepare=False)
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL hot tier compaction: {exc}") from exc
        return True

    async def acompact(self) -> bool:
        saver = self._saver
        if not isinstance(saver, AsyncPostgresSaver):
            raise ConfigError("this PostgreSQL saver is sync: use Threads")
        async with saver.lock, _aconnection(saver.conn) as conn:
            _require_autocommit(conn.autocommit)
            try:
                await conn.execute(VACUUM_SQL, prepare=False)
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL hot tier compaction: {exc}") from exc
        return True

    def run(self, statements: Statements[R], *, write: bool = False) -> R:
        saver = self._saver
        if not isinstance(saver, PostgresSaver):
            raise ConfigError("this PostgreSQL saver is async: use AsyncThreads")
        with saver.lock, _connection(saver.conn) as conn:
            if not owners_ready(saver):  # its own transaction: prune's must start clean
                _transaction(conn, setup_owners())
                mark_owners_ready(saver)
            return _transaction(conn, statements)

    async def arun(self, statements: Statements[R], *, write: bool = False) -> R:
        saver = self._saver
        if not isinstance(saver, AsyncPostgresSaver):
            raise ConfigError("this PostgreSQL saver is sync: use Threads")
        async with saver.lock, _aconnection(saver.conn) as conn:
            if not owners_ready(saver):
                await _atransaction(conn, setup_owners())
                mark_owners_ready(saver)
            return await _atransaction(conn, statements)


def _transaction(conn: Connection[Any], statements: Statements[R]) -> R:
    try:
        with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:

            def execute(sql: str, params: Any, fetch: bool) -> list[Any]:
                cur.execute(sql, params, prepare=False)
                return cur.fetchall() if fetch else []

            return drive(statements, execute)
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL hot tier: {exc}") from exc


async def _atransaction(conn: AsyncConnection[Any], statements: Statements[R]) -> R:
    try:
        async with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:

            async def execute(sql: str, params: Any, fetch: bool) -> list[Any]:
                await cur.execute(sql, params, prepare=False)
                return await cur.fetchall() if fetch else []

            return await adrive(statements, execute)
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL hot tier: {exc}") from exc


def _require_autocommit(autocommit: bool) -> None:
    if not autocommit:
        raise ConfigError(
            "compacting the PostgreSQL hot tier needs an autocommit connection "
            "(VACUUM cannot run in a transaction), as LangGraph's PostgresSaver expects"
        )


@contextmanager
def _connection(conn: Any) -> Iterator[Connection[Any]]:
    if isinstance(conn, ConnectionPool):
        with conn.connection() as pooled:
            yield pooled
    else:
        yield conn


@asynccontextmanager
async def _aconnection(conn: Any) -> AsyncIterator[AsyncConnection[Any]]:
    if isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as pooled:
            yield pooled
    else:
        yield conn
