"""The hot tier's contract: its records, the pure logic shared by the sync and async
thread APIs, and what a backend provides (:class:`HotEngine`, :class:`HotAdmin`; its
savers build on :mod:`engram.stores.hot.owned`).

Nothing here does I/O. Backend operations are written as generators of SQL
statements (``Statements``): they yield ``(sql, params, fetch)`` and receive
the rows, so one generator serves a sync and an async connection alike
(:func:`drive` / :func:`adrive` only differ in how they execute).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, cast
from uuid import UUID

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import RESUME

from engram import _validate as check
from engram._principal import Principal
from engram.config import StoreURL
from engram.errors import ConflictError, InvalidInputError, NotFoundError

TENANT_KEY = "tenant_id"
USER_KEY = "user_id"
FORKED_FROM_KEY = "forked_from"
"""Metadata of a forked thread's first checkpoint: ``"<thread_id>#<checkpoint_id>"``."""

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
"""LangGraph's task id of the writes no task made (an ``update_state``, a ``Command``)."""

_UUID_EPOCH_OFFSET = 0x01B21DD213814000  # 100 ns intervals from 1582-10-15 to 1970-01-01
_INTERNAL_PREFIXES = ("__", "branch:")

R = TypeVar("R")
Params = Sequence[Any] | Mapping[str, Any]
Statement = tuple[str, Params, bool]
Statements = Generator[Statement, list[Any], R]


def drive(statements: Statements[R], execute: Callable[[str, Params, bool], list[Any]]) -> R:
    """Run a statement generator on a sync connection (``execute`` returns rows)."""
    try:
        sql, params, fetch = next(statements)
        while True:
            sql, params, fetch = statements.send(execute(sql, params, fetch))
    except StopIteration as stop:
        return cast(R, stop.value)


async def adrive(
    statements: Statements[R], execute: Callable[[str, Params, bool], Awaitable[list[Any]]]
) -> R:
    """Run a statement generator on an async connection."""
    try:
        sql, params, fetch = next(statements)
        while True:
            sql, params, fetch = statements.send(await execute(sql, params, fetch))
    except StopIteration as stop:
        return cast(R, stop.value)


# --- records ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One thread in a listing: its owner and its root-namespace checkpoints."""

    thread_id: str
    tenant_id: str | None
    user_id: str | None
    checkpoints: int
    last_checkpoint_id: str

    @property
    def updated_at(self) -> datetime | None:
        """When the last checkpoint was written (from its time-ordered id)."""
        return checkpoint_time(self.last_checkpoint_id)


@dataclass(frozen=True, slots=True)
class CheckpointInfo:
    """One checkpoint in a thread's history, newest first."""

    checkpoint_id: str
    parent_id: str | None
    step: int | None
    source: str | None
    created_at: str
    channels: tuple[str, ...]
    pending_writes: int


@dataclass(frozen=True, slots=True)
class ChannelChange:
    channel: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class StateDiff:
    """Channel-level difference between two checkpoints' state."""

    from_checkpoint: str
    to_checkpoint: str
    added: Mapping[str, Any] = field(default_factory=dict)
    removed: Mapping[str, Any] = field(default_factory=dict)
    changed: tuple[ChannelChange, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def render(self, width: int = 100) -> str:
        """A readable, line-per-channel rendering (``+`` added, ``-`` removed, ``~`` changed)."""
        lines = [f"diff {self.from_checkpoint} -> {self.to_checkpoint}"]
        lines += [f"+ {k}: {_short(v, width)}" for k, v in sorted(self.added.items())]
        lines += [f"- {k}: {_short(v, width)}" for k, v in sorted(self.removed.items())]
        lines += [_render_change(c, width) for c in self.changed]
        if self.is_empty:
            lines.append("(no channel changed)")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class ThreadSize:
    """Storage a thread takes: rows and bytes, per table (growth shows here)."""

    thread_id: str
    checkpoints: int
    writes: int
    blobs: int
    checkpoint_bytes: int
    write_bytes: int
    blob_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.checkpoint_bytes + self.write_bytes + self.blob_bytes


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What pruning a thread removed (kept counts the checkpoints left, all namespaces)."""

    thread_id: str
    kept: int
    deleted_checkpoints: int
    deleted_writes: int
    deleted_blobs: int = 0


@dataclass(frozen=True, slots=True)
class ForkResult:
    """A new thread whose first checkpoint copies ``source_checkpoint_id``'s state,
    owned by ``tenant_id`` / ``user_id`` (``None``: the application's own)."""

    source_thread_id: str
    source_checkpoint_id: str
    thread_id: str
    checkpoint_id: str
    tenant_id: str | None = None
    user_id: str | None = None

    @property
    def config(self) -> RunnableConfig:
        """Config to continue the fork as its owner: ``graph.invoke(None, fork.config)``
        (PostgreSQL's row-level security finds the thread by the owner's tenant)."""
        owned = self.tenant_id is not None and self.user_id is not None
        owner = {TENANT_KEY: self.tenant_id, USER_KEY: self.user_id} if owned else {}
        return {"configurable": {"thread_id": self.thread_id, **owner}}


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """The saver calls that write a fork: one ``put`` then ``put_writes`` per task."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    new_versions: dict[str, str | int | float]
    writes: dict[str, list[tuple[str, Any]]]


# --- pure helpers ---------------------------------------------------------------


def thread_config(
    thread_id: str,
    principal: Principal | None = None,
    *,
    checkpoint_id: str | None = None,
    **configurable: Any,
) -> RunnableConfig:
    """The ``RunnableConfig`` to run a thread as ``principal``.

    LangGraph copies string ``configurable`` values into every checkpoint's
    metadata, so ``tenant_id`` / ``user_id`` travel with the thread and
    :meth:`Threads.list_threads` can list a user's threads.
    """
    thread_id = check.text("thread_id", thread_id, line=True)
    values: dict[str, Any] = {**configurable, "thread_id": thread_id}
    if principal is not None:
        values[TENANT_KEY] = principal.tenant_id
        values[USER_KEY] = principal.user_id
    if checkpoint_id is not None:
        values["checkpoint_id"] = checkpoint_id
    return {"configurable": values}


def acting_as(config: RunnableConfig, principal: Principal | None) -> RunnableConfig:
    """``config`` naming ``principal`` (``None``: unchanged). A saver hands its configs
    back to the caller (``snapshot.config``, ``update_state``'s result), whose next call
    with them must act for the same principal as the call that returned them."""
    if principal is None:
        return config
    named = {TENANT_KEY: principal.tenant_id, USER_KEY: principal.user_id}
    return {**config, "configurable": {**config.get("configurable", {}), **named}}


def checkpoint_config(thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """The config reading ``thread_id``'s root namespace (at ``checkpoint_id``, or its latest)."""
    thread_id = check.text("thread_id", thread_id, line=True)
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = check.text("checkpoint_id", checkpoint_id, line=True)
    return {"configurable": configurable}


def checkpoint_time(checkpoint_id: str) -> datetime | None:
    """The creation time encoded in a LangGraph (UUID v6) checkpoint id."""
    try:
        uid = UUID(checkpoint_id)
    except ValueError:
        return None
    if uid.version != 6:
        return None
    ticks = ((uid.int >> 80) << 12) | ((uid.int >> 64) & 0x0FFF)
    return datetime.fromtimestamp((ticks - _UUID_EPOCH_OFFSET) / 1e7, tz=UTC)


def owner_of(metadata: Mapping[str, Any]) -> tuple[str | None, str | None]:
    return metadata.get(TENANT_KEY), metadata.get(USER_KEY)


def owner_params(owner: Principal | None) -> dict[str, str | None]:
    """SQL parameters ``tenant``/``user`` naming a thread owner (``None``: any owner)."""
    return {"tenant": owner.tenant_id if owner else None, "user": owner.user_id if owner else None}


def _named(key: str, config: RunnableConfig, metadata: Mapping[str, Any] | None) -> Any:
    """``key`` of the first place naming it: ``configurable``, config metadata, metadata."""
    sources = (config.get("configurable", {}), config.get("metadata", {}), metadata or {})
    return next((s[key] for s in sources if s.get(key) is not None), None)


def named_tenant(config: RunnableConfig, metadata: Mapping[str, Any] | None = None) -> str | None:
    """The tenant a saver call names (``None`` when none, or not a string); lenient, for
    scoping reads: :func:`declared_owner` is the strict reading a write gets."""
    tenant = _named(TENANT_KEY, config, metadata)
    return tenant if isinstance(tenant, str) else None


def declared_owner(
    config: RunnableConfig, metadata: Mapping[str, Any] | None = None
) -> Principal | None:
    """The principal a write says it acts for (``tenant_id`` / ``user_id`` in the config's
    ``configurable`` or ``metadata``, or the checkpoint's metadata), ``None`` for an
    unscoped (application) write; half an identity is refused."""
    tenant, user = _named(TENANT_KEY, config, metadata), _named(USER_KEY, config, metadata)
    if tenant is None and user is None:
        return None
    if not isinstance(tenant, str) or not isinstance(user, str):
        raise InvalidInputError("a checkpoint names its owner with both tenant_id and user_id")
    return Principal(tenant, user)


def thread_of(config: RunnableConfig) -> str:
    """The thread id of a write's config."""
    return check.text("thread_id", config.get("configurable", {}).get("thread_id"), line=True)


def valid_thread_id(thread_id: object) -> str:
    """A thread id a saver call was given, checked as a write's is, so a read or a
    deletion refuses what no write could have stored (a lone surrogate would otherwise
    reach the driver) the same way on every backend. LangGraph passes a non-string id
    through ``str``, and so does this."""
    given = thread_id if isinstance(thread_id, str) else str(thread_id)
    return check.text("thread_id", given, line=True)


def in_use(thread_id: str) -> ConflictError:
    """The one answer to "this id cannot be yours": the same whoever holds it."""
    return ConflictError(f"thread id {check.shown(thread_id)} is already in use; choose another id")


def admit_write(thread_id: str, writer: Principal | None, owner: Principal | None) -> None:
    """Refuse a write by a principal other than the thread's owner (fixed at its first
    checkpoint). Unscoped writes (``writer`` None) are the application's own."""
    if writer is not None and owner != writer:
        raise in_use(thread_id)


def ensure_owner(principal: Principal | None, thread_id: str, owner: Principal | None) -> None:
    """Raise :class:`NotFoundError`, exactly as for a missing thread, unless ``principal``
    (when given) owns ``thread_id``: another user's thread is indistinguishable from none."""
    if principal is not None and owner != principal:
        raise NotFoundError(f"no thread {check.shown(thread_id)}")


def require(
    tup: CheckpointTuple | None, thread_id: str, checkpoint_id: str | None
) -> CheckpointTuple:
    if tup is None:
        where = f"checkpoint {check.shown(checkpoint_id)} of " if checkpoint_id else ""
        raise NotFoundError(f"no {where}thread {check.shown(thread_id)}")
    return tup


PRUNE_STRATEGIES = ("keep_latest", "delete")
"""LangGraph's ``BaseCheckpointSaver.prune`` strategies."""


def prune_targets(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """Validate LangGraph ``prune(thread_ids, strategy=...)`` arguments."""
    if isinstance(thread_ids, str):
        raise InvalidInputError("thread_ids must be a sequence of thread ids, not a str")
    if strategy not in PRUNE_STRATEGIES:
        raise InvalidInputError(f"unknown prune strategy {strategy!r}; known: keep_latest, delete")
    return [valid_thread_id(t) for t in thread_ids]


def run_ids_of(run_ids: Sequence[object]) -> list[str]:
    """Validate LangGraph ``delete_for_runs(run_ids)``: run ids (a UUID is taken as its
    text, as LangGraph stores it), each one a write could have stored. A bare string is
    refused rather than read as the runs its characters name."""
    if isinstance(run_ids, str | bytes) or not isinstance(run_ids, Iterable):
        raise InvalidInputError("run_ids must be a sequence of run ids, not a single value")
    return [check.text("run_id", r if isinstance(r, str) else str(r), line=True) for r in run_ids]


def is_stale_call(ns: str, root_parent: str | None, root_cutoff: str | None) -> bool:
    """Whether ``ns`` is a subgraph call (``node:task_id``) started from a pruned root checkpoint.

    Such a namespace only served the root checkpoint it started from, so it
    goes with it, as in LangGraph's own prune. A ``checkpointer=True``
    subgraph's namespace has no task id and keeps its last N like the root.
    """
    return (
        ":" in ns
        and root_cutoff is not None
        and root_parent is not None
        and root_parent < root_cutoff
    )


def checkpoint_info(tup: CheckpointTuple) -> CheckpointInfo:
    parent = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
    return CheckpointInfo(
        checkpoint_id=tup.config["configurable"]["checkpoint_id"],
        parent_id=parent,
        step=tup.metadata.get("step"),
        source=tup.metadata.get("source"),
        created_at=tup.checkpoint["ts"],
        channels=tuple(sorted(user_channels(tup.checkpoint["channel_values"]))),
        pending_writes=len(tup.pending_writes or ()),
    )


def user_channels(values: Mapping[str, Any], include_internal: bool = False) -> dict[str, Any]:
    """Channel values without LangGraph's bookkeeping channels (``__start__``, ``branch:…``)."""
    if include_internal:
        return dict(values)
    return {k: v for k, v in values.items() if not k.startswith(_INTERNAL_PREFIXES)}


def diff_states(
    before: CheckpointTuple, after: CheckpointTuple, *, include_internal: bool = False
) -> StateDiff:
    """Channel-level diff of two checkpoints (added / removed / changed keys)."""
    old = user_channels(before.checkpoint["channel_values"], include_internal)
    new = user_channels(after.checkpoint["channel_values"], include_internal)
    changed = tuple(
        ChannelChange(k, old[k], new[k])
        for k in sorted(old.keys() & new.keys())
        if old[k] != new[k]
    )
    return StateDiff(
        from_checkpoint=before.config["configurable"]["checkpoint_id"],
        to_checkpoint=after.config["configurable"]["checkpoint_id"],
        added={k: new[k] for k in new.keys() - old.keys()},
        removed={k: old[k] for k in old.keys() - new.keys()},
        changed=changed,
    )


def carried_writes(pending: Sequence[PendingWrite]) -> list[PendingWrite]:
    """The pending writes a fork keeps: never an answer to an interrupt.

    LangGraph's replay (``invoke(None, past_config)``) drops every ``RESUME`` answer, so
    an interrupt asks again. A fork does the same: a task that received an answer loses
    every write (its output was made with that answer), so it reruns and asks again. The
    writes of the step's other finished tasks are kept, as a resume keeps them (a replay
    would rerun them to the same output): the fork's state shows what the step did, and
    an interrupt not yet answered still waits. The same for the thread's newest
    checkpoint and one it has moved past.
    """
    answered = {task for task, channel, _ in pending if channel == RESUME}
    return [
        (task, channel, value)
        for task, channel, value in pending
        if channel != RESUME and (task == NULL_TASK_ID or task not in answered)
    ]


def fork_plan(source: CheckpointTuple, thread_id: str, owner: Principal | None) -> ForkPlan:
    """What to write so ``thread_id``, owned by ``owner`` (the source thread's recorded
    owner, never one a checkpoint's metadata names), starts from ``source``'s state and
    the pending writes :func:`carried_writes` keeps.

    The checkpoint keeps its id: LangGraph derives task ids from it, so the
    copied pending writes (an interrupt, a finished task of the step) still
    match their tasks when the fork resumes.
    """
    src = source.config["configurable"]
    named = {TENANT_KEY: owner.tenant_id, USER_KEY: owner.user_id} if owner else {}
    metadata: dict[str, Any] = {
        **{k: v for k, v in source.metadata.items() if k not in (TENANT_KEY, USER_KEY)},
        "source": "fork",
        "parents": {},
        FORKED_FROM_KEY: f"{src['thread_id']}#{src['checkpoint_id']}",
        **named,
    }
    writes: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for task_id, channel, value in carried_writes(source.pending_writes or ()):
        writes[task_id].append((channel, value))
    checkpoint = source.checkpoint
    return ForkPlan(
        config={"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **named}},
        checkpoint=checkpoint,
        metadata=cast(CheckpointMetadata, metadata),
        new_versions=dict(checkpoint["channel_versions"]),
        writes=dict(writes),
    )


def _short(value: Any, width: int) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _render_change(change: ChannelChange, width: int) -> str:
    old, new = change.before, change.after
    if isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old:
        extra = new[len(old) :]
        return f"~ {change.channel}: appended {len(extra)} item(s): {_short(extra, width)}"
    return f"~ {change.channel}: {_short(old, width)} -> {_short(new, width)}"


# --- what a backend provides ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SaverOptions:
    """How a saver stores values: its serializer (``None``: LangGraph's default) and
    whether checkpoints are sealed (encrypted at rest) by that serializer."""

    serde: SerializerProtocol | None = None
    sealed: bool = False


class HotAdmin(Protocol):
    """What a backend adds to LangGraph's saver: owner listing, sizes, retention, erasure."""

    def list_threads(self, owner: Principal | None) -> Statements[list[ThreadInfo]]: ...

    def owner(self, thread_id: str) -> Statements[Principal | None]:
        """The thread's owner (``None``: no such thread, or one written unscoped)."""
        ...

    def claim(self, thread_id: str, principal: Principal) -> Statements[Principal | None]:
        """Record ``principal`` as the owner unless the thread has one; the owner after
        (``None`` when the backend cannot see an owner another tenant recorded)."""
        ...

    def settle(self, thread_id: str, principal: Principal) -> Statements[Principal | None]:
        """After ``principal``'s write to ``thread_id`` was stored: record ``principal`` as
        the owner if the thread holds stored rows and has no owner (an erasure of its
        threads landed since the claim); the owner after (``None``: nothing of the thread
        is stored, or the backend cannot see an owner another tenant recorded)."""
        ...

    def sizes(
        self, thread_ids: Sequence[str] | None, owner: Principal | None
    ) -> Statements[list[ThreadSize]]: ...

    def prune(self, thread_id: str, keep_last: int) -> Statements[PruneReport]: ...

    def delete_threads(self, owner: Principal) -> Statements[list[str]]: ...

    def compact(self) -> bool: ...

    async def acompact(self) -> bool: ...

    def run(self, statements: Statements[R], *, write: bool = False) -> R: ...

    async def arun(self, statements: Statements[R], *, write: bool = False) -> R: ...


class HotEngine(Protocol):
    """A hot-tier backend module (``engram.backends.<engine>.hot``), named by one entry of
    the tier's URL-scheme table (``engram.stores.hot._open``)."""

    def open_sync(
        self, url: StoreURL, options: SaverOptions
    ) -> AbstractContextManager[BaseCheckpointSaver[str]]:
        """A set-up sync saver on ``url``, closed on exit."""
        ...

    def open_async(
        self, url: StoreURL, options: SaverOptions
    ) -> AbstractAsyncContextManager[BaseCheckpointSaver[str]]:
        """A set-up async saver on ``url``, closed on exit."""
        ...

    def admin_for(self, saver: BaseCheckpointSaver[Any]) -> HotAdmin | None:
        """This engine's admin for ``saver``, or ``None`` if ``saver`` is not its kind."""
        ...
