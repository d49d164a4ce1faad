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

Row-level security: LangGraph's tables carry no tenant, so engram records each
thread's owner in ``engram_thread_owners`` (written at the thread's first checkpoint,
never changed) and gives ``checkpoints``, ``checkpoint_blobs`` and
``checkpoint_writes`` an ``ENABLE`` + ``FORCE`` policy: a row is seen and written only
when its thread's owner is the tenant in ``app.tenant_id``. The saver sets that from
the ``tenant_id`` of the config LangGraph hands it (:func:`~engram.stores.hot.thread_config`
puts the principal there), else from :func:`~engram.tenant_scope`; the admin statements
from the owner they are run for. :func:`setup` creates the schema and the application
role as the admin; the application role then opens the savers.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from engram._principal import Principal, scoped_tenant, tenant_scope
from engram.backends.postgres._roles import (
    MAY_VACUUM,
    SET_SESSION_TENANT,
    SET_TENANT,
    TENANT,
    ensure_role,
    grant_sql,
    role_url,
    row_policy,
    tenant_policy,
)
from engram.config import AppRole, StoreURL
from engram.errors import BackendError, ConfigError, ConflictError, MissingDependencyError
from engram.stores.hot.contract import (
    TENANT_KEY,
    USER_KEY,
    PruneReport,
    R,
    SaverOptions,
    Statements,
    ThreadInfo,
    ThreadSize,
    adrive,
    drive,
    is_stale_call,
    owner_params,
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

OWNER_SQL = (
    "(%(tenant)s::text IS NULL OR metadata ->> 'tenant_id' = %(tenant)s)"
    " AND (%(user)s::text IS NULL OR metadata ->> 'user_id' = %(user)s)"
)

LIST_THREADS_SQL = f"""
SELECT thread_id, count(*) AS checkpoints, max(checkpoint_id) AS last_checkpoint_id,
       (array_agg(metadata ->> 'tenant_id' ORDER BY checkpoint_id DESC))[1] AS tenant_id,
       (array_agg(metadata ->> 'user_id' ORDER BY checkpoint_id DESC))[1] AS user_id
FROM checkpoints
WHERE checkpoint_ns = '' AND {OWNER_SQL}
GROUP BY thread_id
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
)

DELETE_RUNS_SQL = """
DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)
RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
"""

DELETE_RUN_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
OWNERS_TABLE = "engram_thread_owners"
VERSION_TABLE = "engram_hot_migrations"
LANGGRAPH_VERSION_TABLE = "checkpoint_migrations"

_OWNED_BY_TENANT = (
    f"EXISTS (SELECT 1 FROM {OWNERS_TABLE} o WHERE o.thread_id = {{t}}.thread_id "
    f"AND o.tenant_id = {TENANT})"
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE {OWNERS_TABLE} (
            thread_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            user_id text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )""",
        f"CREATE INDEX {OWNERS_TABLE}_tenant ON {OWNERS_TABLE} (tenant_id, user_id)",
        # Threads written before owners were recorded: the owner their first root
        # checkpoint names (threads written with no owner stay the admin's).
        f"""INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id)
        SELECT DISTINCT ON (thread_id) thread_id, metadata ->> 'tenant_id',
            metadata ->> 'user_id'
        FROM checkpoints
        WHERE checkpoint_ns = '' AND metadata ? 'tenant_id' AND metadata ? 'user_id'
        ORDER BY thread_id, checkpoint_id
        ON CONFLICT DO NOTHING""",
        *tenant_policy(OWNERS_TABLE),
        *(s for t in TABLES for s in row_policy(t, _OWNED_BY_TENANT.format(t=t))),
    ),
)
"""engram's own schema around LangGraph's (append-only, versioned in ``VERSION_TABLE``)."""

SCHEMA_VERSIONS_SQL = f"""
SELECT (SELECT max(v) FROM {LANGGRAPH_VERSION_TABLE}) AS langgraph,
       (SELECT max(version) FROM {VERSION_TABLE}) AS engram
"""
HAS_TABLES_SQL = "SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL AS found"
SETUP_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('engram_hot_setup'))"
VERSION_TABLE_SQL = f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version integer PRIMARY KEY)"
GET_VERSION_SQL = f"SELECT coalesce(max(version), 0) AS v FROM {VERSION_TABLE}"
SET_VERSION_SQL = f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)"

OWNER_OF_SQL = f"SELECT tenant_id, user_id FROM {OWNERS_TABLE} WHERE thread_id = %s"
CLAIM_SQL = (
    f"INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id) VALUES (%s, %s, %s) "
    "ON CONFLICT (thread_id) DO NOTHING"
)
CLAIM_COPY_SQL = f"""INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id)
SELECT %(target)s, tenant_id, user_id FROM {OWNERS_TABLE} WHERE thread_id = %(source)s
ON CONFLICT (thread_id) DO NOTHING"""
DELETE_OWNERS_SQL = f"DELETE FROM {OWNERS_TABLE} WHERE thread_id = ANY(%s)"

DELETE_THREADS_SQL = tuple(
    f"DELETE FROM {table} WHERE thread_id = ANY(%s)" for table in (*TABLES, OWNERS_TABLE)
)

# Rewrites each table and its TOAST table into new files, so deleted rows leave no bytes
# (ACCESS EXCLUSIVE lock while it runs); cannot run inside a transaction block.
VACUUM_SQL = f"VACUUM (FULL, ANALYZE) {', '.join((*TABLES, OWNERS_TABLE))}"

_PRIMITIVES = (str, int, float, bool)
_ALL = (*TABLES, OWNERS_TABLE)


def _may_vacuum(row: Any) -> bool:
    """A :data:`MAY_VACUUM` row (a dict or a tuple, by the connection's row factory)."""
    value = next(iter(row.values())) if isinstance(row, dict) else (row[0] if row else None)
    return bool(value)


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


def writer_of(
    config: RunnableConfig, metadata: Mapping[str, Any] | None = None
) -> tuple[str | None, str | None]:
    """``(tenant_id, user_id)`` a saver call acts for: its config's ``configurable``
    (what :func:`~engram.stores.hot.thread_config` sets), else the checkpoint metadata."""
    configurable = config.get("configurable", {})
    found = (configurable.get(TENANT_KEY), configurable.get(USER_KEY))
    if found == (None, None) and metadata:
        found = (metadata.get(TENANT_KEY), metadata.get(USER_KEY))
    tenant, user = found
    return (tenant if isinstance(tenant, str) else None, user if isinstance(user, str) else None)


@contextmanager
def acting_for(config: RunnableConfig | None) -> Iterator[None]:
    """Run a saver call for the tenant its config names (else the caller's scope)."""
    tenant = writer_of(config)[0] if config is not None else None
    if tenant is None:
        yield
        return
    with tenant_scope(tenant):
        yield


def _refused(exc: psycopg.Error, thread_id: str, tenant: str | None) -> Exception:
    """A saver error as an engram error: a write row-level security refused says why."""
    if not isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return BackendError(f"PostgreSQL hot tier: {exc}")
    if tenant is None:
        return ConfigError(
            f"thread {thread_id!r}: a checkpoint written as the application role needs "
            "its principal (run the graph with thread_config(thread_id, principal))"
        )
    return ConflictError(f"thread id {thread_id!r} is already in use; choose another id")


class EngramPostgresSaver(PostgresSaver):
    """LangGraph's ``PostgresSaver`` acting for the tenant of each call (row-level
    security), recording a thread's owner at its first checkpoint, plus the
    ``copy_thread`` / ``delete_for_runs`` it lacks."""

    def setup(self) -> None:
        """LangGraph's migrations and engram's, when the schema is not current (so the
        application role, which may create nothing, opens a schema the admin set up)."""
        if PostgresAdmin(self).run(schema_current()):
            return
        try:
            super().setup()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise _not_set_up(exc) from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL hot tier setup: {exc}") from exc
        PostgresAdmin(self).run(migrate(), write=True)

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        with super()._cursor(pipeline=pipeline) as cur:
            cur.execute(SET_SESSION_TENANT, (scoped_tenant(),))
            yield cur
            cur.execute(SET_SESSION_TENANT, (None,))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with acting_for(config):
            return super().get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        with acting_for(config):  # read whole: the scope must not outlive one next()
            found = builtins.list(super().list(config, filter=filter, before=before, limit=limit))
        yield from found

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        tenant, user = writer_of(config, metadata)
        thread_id = str(config["configurable"]["thread_id"])
        with acting_for(config) if tenant is None else tenant_scope(tenant):
            try:
                if tenant is not None and user is not None:
                    PostgresAdmin(self).run(claim(thread_id, Principal(tenant, user)), write=True)
                return super().put(config, checkpoint, metadata, new_versions)
            except psycopg.Error as exc:
                raise _refused(exc, thread_id, tenant or scoped_tenant()) from exc

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id = str(config["configurable"]["thread_id"])
        with acting_for(config):
            try:
                super().put_writes(config, writes, task_id, task_path)
            except psycopg.Error as exc:
                raise _refused(exc, thread_id, scoped_tenant()) from exc

    def delete_thread(self, thread_id: str) -> None:
        PostgresAdmin(self).run(delete_thread(str(thread_id)), write=True)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        super().prune(thread_ids, strategy=strategy)
        if strategy == "delete" and not isinstance(thread_ids, str):
            PostgresAdmin(self).run(forget_owners(thread_ids), write=True)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        with acting_for(config):
            return super().get_delta_channel_history(config=config, channels=channels)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        PostgresAdmin(self).run(copy_thread(source_thread_id, target_thread_id), write=True)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        PostgresAdmin(self).run(delete_for_runs(run_ids), write=True)


class AsyncEngramPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` with the same tenant scoping, owners and additions as
    :class:`EngramPostgresSaver`."""

    async def setup(self) -> None:
        if await PostgresAdmin(self).arun(schema_current()):
            return
        try:
            await super().setup()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise _not_set_up(exc) from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL hot tier setup: {exc}") from exc
        await PostgresAdmin(self).arun(migrate(), write=True)

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        async with super()._cursor(pipeline=pipeline) as cur:
            await cur.execute(SET_SESSION_TENANT, (scoped_tenant(),))
            yield cur
            await cur.execute(SET_SESSION_TENANT, (None,))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with acting_for(config):
            return await super().aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        with acting_for(config):  # read whole: the scope must not outlive one step
            found = [
                t async for t in super().alist(config, filter=filter, before=before, limit=limit)
            ]
        for tup in found:
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        tenant, user = writer_of(config, metadata)
        thread_id = str(config["configurable"]["thread_id"])
        with acting_for(config) if tenant is None else tenant_scope(tenant):
            try:
                if tenant is not None and user is not None:
                    owner = Principal(tenant, user)
                    await PostgresAdmin(self).arun(claim(thread_id, owner), write=True)
                return await super().aput(config, checkpoint, metadata, new_versions)
            except psycopg.Error as exc:
                raise _refused(exc, thread_id, tenant or scoped_tenant()) from exc

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        thread_id = str(config["configurable"]["thread_id"])
        with acting_for(config):
            try:
                await super().aput_writes(config, writes, task_id, task_path)
            except psycopg.Error as exc:
                raise _refused(exc, thread_id, scoped_tenant()) from exc

    async def adelete_thread(self, thread_id: str) -> None:
        await PostgresAdmin(self).arun(delete_thread(str(thread_id)), write=True)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await super().aprune(thread_ids, strategy=strategy)
        if strategy == "delete" and not isinstance(thread_ids, str):
            await PostgresAdmin(self).arun(forget_owners(thread_ids), write=True)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        with acting_for(config):
            return await super().aget_delta_channel_history(config=config, channels=channels)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await PostgresAdmin(self).arun(copy_thread(source_thread_id, target_thread_id), write=True)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await PostgresAdmin(self).arun(delete_for_runs(run_ids), write=True)


def _not_set_up(exc: psycopg.Error) -> ConfigError:
    return ConfigError(
        "the hot-tier schema is missing or old and this role may not change it: "
        f"run setup() as the admin first ({exc})"
    )


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
def open_sync(url: StoreURL, options: SaverOptions) -> Iterator[PostgresSaver]:
    """LangGraph's ``PostgresSaver`` on ``url``, set up (sealed when ``options`` say so)."""
    cls = SealedPostgresSaver if options.sealed else EngramPostgresSaver
    with Connection.connect(url.dsn, **_connect_kwargs()) as conn:
        saver = cls(conn, serde=options.serde)
        saver.setup()
        yield saver


@asynccontextmanager
async def open_async(url: StoreURL, options: SaverOptions) -> AsyncIterator[AsyncPostgresSaver]:
    """LangGraph's ``AsyncPostgresSaver`` on ``url``, set up (sealed when asked)."""
    cls = AsyncSealedPostgresSaver if options.sealed else AsyncEngramPostgresSaver
    async with await AsyncConnection.connect(url.dsn, **_connect_kwargs()) as conn:
        saver = cls(conn, serde=options.serde)
        await saver.setup()
        yield saver


def admin_for(saver: BaseCheckpointSaver[Any]) -> PostgresAdmin | None:
    """The admin of a LangGraph PostgreSQL saver (sync or async), else ``None``."""
    return PostgresAdmin(saver) if isinstance(saver, PostgresSaver | AsyncPostgresSaver) else None


# --- schema and roles -------------------------------------------------------------------


def schema_current() -> Statements[bool]:
    """Whether LangGraph's and engram's migrations have all run (reads only)."""
    found = yield HAS_TABLES_SQL, (LANGGRAPH_VERSION_TABLE, VERSION_TABLE), True
    if not found[0]["found"]:
        return False
    row = (yield SCHEMA_VERSIONS_SQL, (), True)[0]
    langgraph, engram = row["langgraph"], row["engram"]
    return (
        langgraph is not None
        and langgraph >= len(PostgresSaver.MIGRATIONS) - 1
        and engram is not None
        and engram >= len(MIGRATIONS)
    )


def migrate() -> Statements[None]:
    """engram's migrations (after LangGraph's), one transaction under a lock."""
    yield SETUP_LOCK_SQL, (), False
    yield VERSION_TABLE_SQL, (), False
    done = int((yield GET_VERSION_SQL, (), True)[0]["v"])
    for version, statements in enumerate(MIGRATIONS[done:], start=done + 1):
        for statement in statements:
            yield statement, (), False
        yield SET_VERSION_SQL, (version,), False


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the checkpoint schema (LangGraph's tables, the thread owners,
    row-level security) as the admin, and grant the application role (created if
    missing, default ``engram_app``); return the role's connection string. Idempotent."""
    role = role or AppRole()
    try:
        with Connection.connect(admin_url, **_connect_kwargs()) as conn:
            EngramPostgresSaver(conn).setup()
        with psycopg.connect(admin_url, autocommit=True) as plain, plain.transaction():
            maintain = ensure_role(plain, role)
            tables = (*TABLES, OWNERS_TABLE)
            read_only = (LANGGRAPH_VERSION_TABLE, VERSION_TABLE)
            for statement in grant_sql(role.name, tables, read_only=read_only, maintain=maintain):
                plain.execute(statement)
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL hot tier setup: {exc}") from exc
    return role_url(admin_url, role)


# --- statements ---------------------------------------------------------------------


def act_for(owner: Principal | None) -> Statements[None]:
    """Scope the rest of the transaction to ``owner``'s tenant (when there is one)."""
    if owner is not None:
        yield SET_TENANT, (owner.tenant_id,), False


def owner(thread_id: str) -> Statements[Principal | None]:
    """The thread's owner as the current tenant sees it (``None``: no such thread, one
    written without a principal, or another tenant's)."""
    rows = yield OWNER_OF_SQL, (thread_id,), True
    return Principal(rows[0]["tenant_id"], rows[0]["user_id"]) if rows else None


def claim(thread_id: str, principal: Principal) -> Statements[Principal | None]:
    """Record ``principal`` as the owner unless the thread has one; the owner after
    (``None`` when another tenant holds the id: row-level security hides its owner)."""
    yield from act_for(principal)
    yield CLAIM_SQL, (thread_id, principal.tenant_id, principal.user_id), False
    return (yield from owner(thread_id))


def forget_owners(thread_ids: Sequence[str]) -> Statements[None]:
    yield DELETE_OWNERS_SQL, ([str(t) for t in thread_ids],), False


def delete_thread(thread_id: str) -> Statements[None]:
    """LangGraph's ``delete_thread``: every row of the thread, and its owner."""
    for sql in DELETE_THREADS_SQL:
        yield sql, ([thread_id],), False


def list_threads(owner: Principal | None) -> Statements[list[ThreadInfo]]:
    yield from act_for(owner)
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
    yield from act_for(owner)
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
    for sql in DELETE_THREADS_SQL:
        yield sql, (found,), False
    return found


def copy_thread(source: str, target: str) -> Statements[None]:
    """Copy every row of ``source`` to ``target``, owned by ``source``'s owner."""
    yield CLAIM_COPY_SQL, {"source": source, "target": target}, False
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
                if not all(_may_vacuum(conn.execute(MAY_VACUUM, (t,)).fetchone()) for t in _ALL):
                    return False
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
                for table in _ALL:
                    row = await (await conn.execute(MAY_VACUUM, (table,))).fetchone()
                    if not _may_vacuum(row):
                        return False
                await conn.execute(VACUUM_SQL, prepare=False)
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL hot tier compaction: {exc}") from exc
        return True

    def run(self, statements: Statements[R], *, write: bool = False) -> R:
        saver = self._saver
        if not isinstance(saver, PostgresSaver):
            raise ConfigError("this PostgreSQL saver is async: use AsyncThreads")
        with saver.lock, _connection(saver.conn) as conn:
            try:
                with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                    scope = _Scope(scoped_tenant())

                    def execute(sql: str, params: Any, fetch: bool) -> list[Any]:
                        if (first := scope.before(sql)) is not None:
                            cur.execute(*first, prepare=False)
                        cur.execute(sql, params, prepare=False)
                        return cur.fetchall() if fetch else []

                    return drive(statements, execute)
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL hot tier: {exc}") from exc

    async def arun(self, statements: Statements[R], *, write: bool = False) -> R:
        saver = self._saver
        if not isinstance(saver, AsyncPostgresSaver):
            raise ConfigError("this PostgreSQL saver is sync: use Threads")
        async with saver.lock, _aconnection(saver.conn) as conn:
            try:
                async with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                    scope = _Scope(scoped_tenant())

                    async def execute(sql: str, params: Any, fetch: bool) -> list[Any]:
                        if (first := scope.before(sql)) is not None:
                            await cur.execute(*first, prepare=False)
                        await cur.execute(sql, params, prepare=False)
                        return await cur.fetchall() if fetch else []

                    return await adrive(statements, execute)
            except psycopg.Error as exc:
                raise BackendError(f"PostgreSQL hot tier: {exc}") from exc


class _Scope:
    """The tenant an admin transaction acts for: the caller's :func:`~engram.tenant_scope`
    unless its statements name one (:func:`act_for`), set before the first statement
    that is not ``SET TRANSACTION`` (which must come first)."""

    def __init__(self, tenant: str | None) -> None:
        self._tenant = tenant
        self._set = False

    def before(self, sql: str) -> tuple[str, tuple[str | None]] | None:
        if self._set or sql.lstrip().upper().startswith("SET TRANSACTION"):
            return None
        self._set = True
        return None if sql == SET_TENANT else (SET_TENANT, (self._tenant,))


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
