"""Hot tier on PostgreSQL: LangGraph's own ``PostgresSaver`` / ``AsyncPostgresSaver``.

Two additions around LangGraph's savers:

- with encryption on, the ``Sealed*`` savers route every channel value
  through the serializer: stock ``PostgresSaver`` stores primitive channel
  values (str, int, float, bool) inline in the ``checkpoints.checkpoint``
  JSONB column, where an ``EncryptedSerializer`` never sees them; without it,
  a str holding NUL, which JSONB cannot hold, goes the same way;
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
from the owner they are run for. A call naming no principal (``delete_thread``,
``prune``...) needs a :func:`~engram.tenant_scope`, and says so rather than see no row.
:func:`setup` creates the schema and the application role as the admin; the
application role then opens the savers.
"""

from __future__ import annotations

import builtins
import time
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

from engram._principal import scoped_tenant, tenant_scope
from engram.backends.postgres._hot_seal import Blobs, holds_nul, seal, sealed_args
from engram.backends.postgres._hot_sql import (
    LANGGRAPH_VERSION_TABLE,
    OWNERS_TABLE,
    PUBLICATIONS_TABLE,
    TABLES,
    VACUUM_SQL,
    VERSION_TABLE,
    claim,
    copy_thread,
    delete_for_runs,
    delete_thread,
    delete_threads,
    forget_owners,
    list_threads,
    migrate,
    owner,
    prune,
    schema_current,
    settle,
    sizes,
)
from engram.backends.postgres._roles import (
    CLEAR_EMPTIED_STATISTICS,
    CLEAR_STATISTICS_SINCE,
    MAY_VACUUM,
    SET_SESSION_TENANT,
    SET_TENANT,
    clear_emptied_statistics,
    ensure_role,
    grant_sql,
    role_url,
)
from engram.config import AppRole, StoreURL
from engram.errors import BackendError, ConfigError, ConflictError, MissingDependencyError
from engram.stores.hot.contract import (
    R,
    SaverOptions,
    Statements,
    adrive,
    drive,
    named_tenant,
    prune_targets,
    valid_thread_id,
)
from engram.stores.hot.owned import AsyncOwnedSaver, OwnedSaver

try:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool, ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

_ALL = (*TABLES, OWNERS_TABLE)


def _may_vacuum(row: Any) -> bool:
    """A :data:`MAY_VACUUM` row (a dict or a tuple, by the connection's row factory)."""
    value = next(iter(row.values())) if isinstance(row, dict) else (row[0] if row else None)
    return bool(value)


# --- savers -------------------------------------------------------------------------


@contextmanager
def acting_for(config: RunnableConfig | None) -> Iterator[None]:
    """Run a saver call for the tenant its config names (else the caller's scope)."""
    tenant = named_tenant(config) if config is not None else None
    if tenant is None:
        yield
        return
    with tenant_scope(tenant):
        yield


def _refused(exc: psycopg.Error, config: RunnableConfig, tenant: str | None) -> Exception:
    """A saver error as an engram error: a write row-level security refused says why."""
    thread_id = config["configurable"]["thread_id"]
    if not isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return BackendError(f"PostgreSQL hot tier: {exc}")
    if tenant is None:
        return ConfigError(
            f"thread {thread_id!r}: a checkpoint written as the application role needs "
            "its principal (run the graph with thread_config(thread_id, principal))"
        )
    return ConflictError(f"thread id {thread_id!r} is already in use; choose another id")


BYPASSES_RLS_SQL = (
    "SELECT rolsuper OR rolbypassrls AS bypasses FROM pg_roles WHERE rolname = current_user"
)


def _needs_tenant(call: str) -> Statements[None]:
    """Refuse ``call``, a LangGraph saver call that names no principal (``delete_thread``,
    ``prune``...), when no tenant is in scope and row-level security applies to this
    role: it would see no row, change nothing and report success."""
    if scoped_tenant() is not None:
        return
    rows = yield BYPASSES_RLS_SQL, (), True
    if not rows[0]["bypasses"]:
        raise ConfigError(
            f"{call} as the application role needs its tenant: call it inside "
            "tenant_scope(tenant_id) (row-level security shows no thread without one)"
        )


def _unscoped(call: str, statements: Statements[R]) -> Statements[R]:
    """The statements of ``call`` (one naming no principal) behind :func:`_needs_tenant`."""
    yield from _needs_tenant(call)
    return (yield from statements)


def _copy(source: str, target: str) -> Statements[None]:
    """LangGraph's ``copy_thread``, both ids checked before anything runs."""
    return _unscoped("copy_thread", copy_thread(valid_thread_id(source), valid_thread_id(target)))


class EngramPostgresSaver(OwnedSaver, Blobs, PostgresSaver):
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
        tenant = named_tenant(config, metadata)
        checkpoint, new_versions = seal(checkpoint, new_versions, holds_nul)
        with acting_for(config) if tenant is None else tenant_scope(tenant):
            try:  # OwnedSaver claims the owner, or refuses another principal's write
                return super().put(config, checkpoint, metadata, new_versions)
            except psycopg.Error as exc:
                raise _refused(exc, config, tenant or scoped_tenant()) from exc

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        with acting_for(config):
            try:
                super().put_writes(config, writes, task_id, task_path)
            except psycopg.Error as exc:
                raise _refused(exc, config, scoped_tenant()) from exc

    def delete_thread(self, thread_id: str) -> None:
        statements = delete_thread(valid_thread_id(thread_id))
        PostgresAdmin(self).run(_unscoped("delete_thread", statements), write=True)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        targets = prune_targets(thread_ids, strategy)
        PostgresAdmin(self).run(_needs_tenant("prune"))
        super().prune(targets, strategy=strategy)
        if strategy == "delete":
            PostgresAdmin(self).run(forget_owners(targets), write=True)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        with acting_for(config):
            return super().get_delta_channel_history(config=config, channels=channels)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        PostgresAdmin(self).run(_copy(source_thread_id, target_thread_id), write=True)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        statements = delete_for_runs(run_ids)
        PostgresAdmin(self).run(_unscoped("delete_for_runs", statements), write=True)


class AsyncEngramPostgresSaver(AsyncOwnedSaver, Blobs, AsyncPostgresSaver):
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
        tenant = named_tenant(config, metadata)
        checkpoint, new_versions = seal(checkpoint, new_versions, holds_nul)
        with acting_for(config) if tenant is None else tenant_scope(tenant):
            try:
                return await super().aput(config, checkpoint, metadata, new_versions)
            except psycopg.Error as exc:
                raise _refused(exc, config, tenant or scoped_tenant()) from exc

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        with acting_for(config):
            try:
                await super().aput_writes(config, writes, task_id, task_path)
            except psycopg.Error as exc:
                raise _refused(exc, config, scoped_tenant()) from exc

    async def adelete_thread(self, thread_id: str) -> None:
        statements = delete_thread(valid_thread_id(thread_id))
        await PostgresAdmin(self).arun(_unscoped("delete_thread", statements), write=True)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        targets = prune_targets(thread_ids, strategy)
        await PostgresAdmin(self).arun(_needs_tenant("prune"))
        await super().aprune(targets, strategy=strategy)
        if strategy == "delete":
            await PostgresAdmin(self).arun(forget_owners(targets), write=True)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        with acting_for(config):
            return await super().aget_delta_channel_history(config=config, channels=channels)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await PostgresAdmin(self).arun(_copy(source_thread_id, target_thread_id), write=True)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        statements = delete_for_runs(run_ids)
        await PostgresAdmin(self).arun(_unscoped("delete_for_runs", statements), write=True)


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
        return super().put(config, *sealed_args(checkpoint, metadata, new_versions))


class AsyncSealedPostgresSaver(AsyncEngramPostgresSaver):
    """``AsyncPostgresSaver`` that keeps no channel value inline (for encryption at rest)."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await super().aput(config, *sealed_args(checkpoint, metadata, new_versions))


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


SETUP_TRY_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('engram_hot_langgraph_setup')) AS locked"
SETUP_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtext('engram_hot_langgraph_setup'))"
SETUP_LOCK_TIMEOUT = 300.0
"""Seconds :func:`setup` waits for the setups ahead of it before giving up."""
SETUP_LOCK_POLL = 0.05
"""Seconds between two tries of the setup lock."""


@contextmanager
def _setup_turn(conn: Connection[Any]) -> Iterator[None]:
    """Hold the setup lock on the autocommit connection ``conn``, waiting for it while
    holding no snapshot. LangGraph's migrations build indexes CONCURRENTLY, which waits
    for every transaction with an older snapshot: a setup blocked inside
    ``pg_advisory_lock`` is such a transaction, waiting in turn for the lock's holder
    (a deadlock). Each try here is a transaction of its own, over at once."""
    deadline = time.monotonic() + SETUP_LOCK_TIMEOUT
    while not _locked(conn.execute(SETUP_TRY_LOCK_SQL).fetchone()):
        if time.monotonic() > deadline:
            raise BackendError(
                "PostgreSQL hot tier setup: another setup held its lock for more than "
                f"{SETUP_LOCK_TIMEOUT:.0f} s"
            )
        time.sleep(SETUP_LOCK_POLL)
    try:
        yield
    finally:
        conn.execute(SETUP_UNLOCK_SQL)


def _locked(row: Mapping[str, Any] | None) -> bool:
    return row is not None and bool(row["locked"])


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the checkpoint schema (LangGraph's tables, the thread owners,
    row-level security) as the admin, and grant the application role (created if
    missing, default ``engram_app``); return the role's connection string. Idempotent."""
    role = role or AppRole()
    try:
        # LangGraph's own migrations are not safe to run twice at once: setups queue.
        with Connection.connect(admin_url, **_connect_kwargs()) as conn, _setup_turn(conn):
            EngramPostgresSaver(conn).setup()
        with psycopg.connect(admin_url, autocommit=True) as plain, plain.transaction():
            maintain = ensure_role(plain, role)
            tables = (*TABLES, OWNERS_TABLE, PUBLICATIONS_TABLE)
            read_only = (LANGGRAPH_VERSION_TABLE, VERSION_TABLE)
            for statement in grant_sql(role.name, tables, read_only=read_only, maintain=maintain):
                plain.execute(statement)
    except psycopg.Error as exc:
        raise BackendError(f"PostgreSQL hot tier setup: {exc}") from exc
    return role_url(admin_url, role)


# --- running them -------------------------------------------------------------------


class PostgresAdmin:
    """Runs hot-tier statements in one transaction on a LangGraph Postgres saver's connection."""

    list_threads = staticmethod(list_threads)
    owner = staticmethod(owner)
    claim = staticmethod(claim)
    settle = staticmethod(settle)
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
                clear_emptied_statistics(conn, _ALL)
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
                if conn.info.server_version >= CLEAR_STATISTICS_SINCE:
                    await conn.execute(CLEAR_EMPTIED_STATISTICS, (list(_ALL),))
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
