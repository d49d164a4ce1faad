"""Hot tier on plain Redis (>= 6.2) or Valkey: no module (no RedisJSON, no RediSearch).

A LangGraph ``BaseCheckpointSaver`` written on core data structures only: a hash per
checkpoint (the checkpoint, its metadata, its parent and its pending writes), a sorted
set of checkpoint ids per namespace, sets naming a thread's keys and namespaces, an
owner hash per thread and one set of thread ids per owner (layout in :mod:`._keys`).
A checkpoint is written in one ``MULTI`` transaction; an owner is claimed and a thread
erased by a Lua script, so each is atomic. Checkpoints and metadata go through the
saver's serializer whole, so with a key set they are sealed with AES-GCM at rest.

``redis://[user:password@]host:port/db[?thread_ttl=SECONDS]``: with ``thread_ttl`` every
key of a thread (its owner record too) expires that long after the thread's last write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from engram._principal import Principal
from engram.backends.redis import _admin_ops as admin_ops
from engram.backends.redis import _saver_ops as ops
from engram.backends.redis._keys import SCRIPTS
from engram.config import StoreURL
from engram.errors import BackendError, ConfigError, MissingDependencyError
from engram.stores.hot.contract import (
    PruneReport,
    R,
    SaverOptions,
    Statements,
    ThreadSize,
    adrive,
    drive,
    valid_thread_id,
)
from engram.stores.hot.owned import AsyncOwnedSaver, OwnedSaver

try:
    import redis
    import redis.asyncio as aredis
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("Redis needs: pip install 'engram[redis]'") from exc

TTL_PARAM = "thread_ttl"
MIN_VERSION = (6, 2)
CONNECT_TIMEOUT = 5.0
COMPACT_TIMEOUT = 300.0
"""Seconds :meth:`RedisAdmin.compact` waits for Redis to finish rewriting its files."""


def _failure(exc: redis.RedisError) -> BackendError:
    """A driver error as engram's one-line error."""
    text = " ".join(str(exc).split())
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return BackendError(f"Redis hot tier unavailable: {text}")
    return BackendError(f"Redis hot tier: {text}")


def parse(url: StoreURL) -> tuple[str, int | None]:
    """The driver's URL (engram's ``thread_ttl`` taken out) and the thread TTL."""
    parts = urlsplit(url.dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = [v for k, v in query if k == TTL_PARAM]
    rest = urlencode([(k, v) for k, v in query if k != TTL_PARAM])
    return urlunsplit(parts._replace(query=rest)), _ttl(given[-1]) if given else None


def _ttl(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{TTL_PARAM} is a whole number of seconds >= 1, not {value!r}")
    return int(value)


def _check_version(info: Mapping[str, Any]) -> None:
    version = str(info.get("redis_version", "0"))
    found = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if found < MIN_VERSION:
        raise ConfigError(f"the Redis hot tier needs Redis >= 6.2 (or Valkey); found {version}")


# --- running commands ----------------------------------------------------------------


Scripts = Mapping[str, Any]


def _execute(client: Any, scripts: Scripts, command: str, args: Any) -> Any:
    if command in ("MULTI", "PIPE"):
        with client.pipeline(transaction=command == "MULTI") as pipe:
            for item in args:
                pipe.execute_command(*item)
            return pipe.execute()
    if command == "EVAL":
        name, argv = args
        return scripts[name](keys=[], args=list(argv), client=client)
    if command == "TRY":
        try:
            return client.execute_command(*args)
        except redis.ResponseError as exc:
            return exc
    return client.execute_command(command, *args)


async def _aexecute(client: Any, scripts: Scripts, command: str, args: Any) -> Any:
    if command in ("MULTI", "PIPE"):
        async with client.pipeline(transaction=command == "MULTI") as pipe:
            for item in args:
                pipe.execute_command(*item)
            return await pipe.execute()
    if command == "EVAL":
        name, argv = args
        return await scripts[name](keys=[], args=list(argv), client=client)
    if command == "TRY":
        try:
            return await client.execute_command(*args)
        except redis.ResponseError as exc:
            return exc
    return await client.execute_command(command, *args)


class _Clients:
    """A saver's connections: always a sync client; an async one when opened async."""

    def __init__(self, client: redis.Redis, aclient: aredis.Redis | None) -> None:
        self.client, self.aclient = client, aclient
        self.scripts = {name: client.register_script(body) for name, body in SCRIPTS.items()}
        self.ascripts = (
            {name: aclient.register_script(body) for name, body in SCRIPTS.items()}
            if aclient is not None
            else {}
        )

    def run(self, commands: Statements[R]) -> R:
        def execute(command: str, args: Any, fetch: bool) -> Any:
            return _execute(self.client, self.scripts, command, args)

        try:
            return drive(commands, execute)
        except redis.RedisError as exc:
            raise _failure(exc) from exc

    async def arun(self, commands: Statements[R]) -> R:
        aclient = self.aclient
        if aclient is None:
            raise ConfigError(
                "this Redis saver was opened by open_checkpointer (sync): "
                "open it with aopen_checkpointer for async calls"
            )

        async def execute(command: str, args: Any, fetch: bool) -> Any:
            return await _aexecute(aclient, self.ascripts, command, args)

        try:
            return await adrive(commands, execute)
        except redis.RedisError as exc:
            raise _failure(exc) from exc


# --- the saver ------------------------------------------------------------------------


def _copy(source: str, target: str, ttl: int | None) -> Statements[None]:
    """LangGraph's ``copy_thread``, both ids checked before anything runs."""
    return admin_ops.copy_thread(valid_thread_id(source), valid_thread_id(target), ttl)


class _RedisCore(BaseCheckpointSaver[str]):
    """LangGraph's saver interface on Redis; sync and async share every command."""

    def __init__(
        self, clients: _Clients, *, ttl: int | None, serde: SerializerProtocol | None
    ) -> None:
        super().__init__(serde=serde)
        self.clients, self.ttl = clients, ttl

    def run(self, commands: Statements[R]) -> R:
        return self.clients.run(commands)

    async def arun(self, commands: Statements[R]) -> R:
        return await self.clients.arun(commands)

    def get_next_version(self, current: str | None, channel: None) -> str:
        return ops.next_version(current)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.run(ops.get_tuple(self.serde, config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        yield from self.run(ops.list_tuples(self.serde, config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.run(ops.put(self.serde, self.ttl, config, checkpoint, metadata))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.run(ops.put_writes(self.serde, self.ttl, config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self.run(ops.drop_thread(valid_thread_id(thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.run(admin_ops.prune_threads(self.serde, thread_ids, strategy))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.run(_copy(source_thread_id, target_thread_id, self.ttl))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.run(admin_ops.delete_for_runs(self.serde, run_ids))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.arun(ops.get_tuple(self.serde, config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for found in await self.arun(ops.list_tuples(self.serde, config, filter, before, limit)):
            yield found

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        commands = ops.put(self.serde, self.ttl, config, checkpoint, metadata)
        return await self.arun(commands)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.arun(ops.put_writes(self.serde, self.ttl, config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self.arun(ops.drop_thread(valid_thread_id(thread_id)))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self.arun(admin_ops.prune_threads(self.serde, thread_ids, strategy))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self.arun(_copy(source_thread_id, target_thread_id, self.ttl))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self.arun(admin_ops.delete_for_runs(self.serde, run_ids))


class RedisSaver(OwnedSaver, AsyncOwnedSaver, _RedisCore):
    """The Redis checkpoint saver with thread owners (:class:`OwnedSaver`): another
    principal's write to a thread is refused before it is stored. Opened async, it
    serves sync callers too (it holds a connection of each kind)."""


# --- the admin ------------------------------------------------------------------------


class RedisAdmin:
    """Owner listing, sizes, retention, erasure and compaction on a :class:`RedisSaver`."""

    list_threads = staticmethod(admin_ops.list_threads)
    owner = staticmethod(admin_ops.owner)
    delete_threads = staticmethod(admin_ops.delete_threads)

    def __init__(self, saver: RedisSaver) -> None:
        self._saver = saver

    def claim(self, thread_id: str, principal: Principal) -> Statements[Principal | None]:
        return admin_ops.claim(thread_id, principal, self._saver.ttl)

    def settle(self, thread_id: str, principal: Principal) -> Statements[Principal | None]:
        return admin_ops.claim(thread_id, principal, self._saver.ttl, stored=True)

    def sizes(
        self, thread_ids: Sequence[str] | None, owner: Principal | None
    ) -> Statements[list[ThreadSize]]:
        return admin_ops.sizes(thread_ids, owner)

    def prune(self, thread_id: str, keep_last: int) -> Statements[PruneReport]:
        return admin_ops.prune(self._saver.serde, thread_id, keep_last)

    def run(self, statements: Statements[R], *, write: bool = False) -> R:
        return self._saver.run(statements)

    async def arun(self, statements: Statements[R], *, write: bool = False) -> R:
        return await self._saver.arun(statements)

    def compact(self) -> bool:
        """Have Redis rewrite its persistence files without deleted keys: the AOF
        (``BGREWRITEAOF``) and, when snapshots are configured, the RDB file (``BGSAVE``);
        waits until both are done. False when Redis persists nothing, or refuses."""
        started = []
        for step in (admin_ops.rewrite_aof, admin_ops.snapshot):
            self._idle()
            started.append(self.run(step()))
        self._idle()
        return any(started)

    async def acompact(self) -> bool:
        started = []
        for step in (admin_ops.rewrite_aof, admin_ops.snapshot):
            await self._aidle()
            started.append(await self.arun(step()))
        await self._aidle()
        return any(started)

    def _idle(self) -> None:
        deadline = time.monotonic() + COMPACT_TIMEOUT
        while self.run(admin_ops.rewriting()):
            _check_deadline(deadline)
            time.sleep(0.05)

    async def _aidle(self) -> None:
        deadline = time.monotonic() + COMPACT_TIMEOUT
        while await self.arun(admin_ops.rewriting()):
            _check_deadline(deadline)
            await asyncio.sleep(0.05)


def _check_deadline(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise BackendError(f"Redis did not finish rewriting its files in {COMPACT_TIMEOUT:.0f} s")


# --- opening -----------------------------------------------------------------------


def _client(dsn: str) -> redis.Redis:
    try:
        return redis.Redis.from_url(dsn, socket_connect_timeout=CONNECT_TIMEOUT)
    except ValueError as exc:
        raise ConfigError(f"not a Redis URL: {exc}") from exc


@contextmanager
def open_sync(url: StoreURL, options: SaverOptions) -> Iterator[RedisSaver]:
    """A saver on the Redis server of ``url`` (checked to answer and be >= 6.2)."""
    dsn, ttl = parse(url)
    client = _client(dsn)
    try:
        clients = _Clients(client, None)
        _check_version(clients.run(admin_ops.server_info()))
        yield RedisSaver(clients, ttl=ttl, serde=options.serde)
    finally:
        client.close()


@asynccontextmanager
async def open_async(url: StoreURL, options: SaverOptions) -> AsyncIterator[RedisSaver]:
    """A saver with an async connection (and a sync one) on the server of ``url``."""
    dsn, ttl = parse(url)
    client = _client(dsn)
    aclient = aredis.Redis.from_url(dsn, socket_connect_timeout=CONNECT_TIMEOUT)
    try:
        clients = _Clients(client, aclient)
        _check_version(await clients.arun(admin_ops.server_info()))
        yield RedisSaver(clients, ttl=ttl, serde=options.serde)
    finally:
        await aclient.aclose()
        client.close()


def admin_for(saver: BaseCheckpointSaver[Any]) -> RedisAdmin | None:
    """The admin of an engram Redis saver, else ``None``."""
    return RedisAdmin(saver) if isinstance(saver, RedisSaver) else None
