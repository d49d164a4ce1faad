"""Inspection, time travel and retention over any engram hot-tier saver.

:class:`Threads` (sync) and :class:`AsyncThreads` wrap a LangGraph saver opened
by :func:`engram.stores.hot.open_checkpointer`. They differ only in how they
call the saver and run backend statements; the logic lives in
:mod:`engram.stores.hot.contract` and in the backends' statement generators.
"""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ParamSpec, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from engram import _validate as check
from engram._principal import Principal, tenant_scope, validate_id
from engram.stores.hot._calls import checked_limit
from engram.stores.hot._open import admin_for
from engram.stores.hot.contract import (
    TENANT_KEY,
    USER_KEY,
    CheckpointInfo,
    ForkPlan,
    ForkResult,
    PruneReport,
    StateDiff,
    ThreadInfo,
    ThreadSize,
    admit_write,
    checkpoint_config,
    checkpoint_info,
    diff_states,
    ensure_owner,
    fork_plan,
    in_use,
    require,
)


def _keep(keep_last: int) -> int:
    return check.integer("keep_last", keep_last, minimum=1)


def _principal(principal: Principal) -> Principal:
    return check.principal(principal)


def _thread(thread_id: str) -> str:
    return check.text("thread_id", thread_id, line=True)


def _scope(principal: Principal | None) -> Principal | None:
    return None if principal is None else check.principal(principal)


def _fork_target(thread_id: str, new_thread_id: str | None) -> str:
    return validate_id("new_thread_id", new_thread_id or f"{thread_id}-fork-{uuid.uuid4().hex[:8]}")


def _fork_result(plan: ForkPlan, source: CheckpointTuple) -> ForkResult:
    src, made = source.config["configurable"], plan.config["configurable"]
    return ForkResult(
        src["thread_id"],
        src["checkpoint_id"],
        made["thread_id"],
        plan.checkpoint["id"],
        made.get(TENANT_KEY),
        made.get(USER_KEY),
    )


P = ParamSpec("P")
R = TypeVar("R")


def _tenant_of(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> AbstractContextManager[object]:
    """The tenant scope of a call's ``principal`` argument (none given: no scope)."""
    principal = signature.bind_partial(*args, **kwargs).arguments.get("principal")
    if isinstance(principal, Principal):
        return tenant_scope(principal.tenant_id)
    return nullcontext()


def _acting(func: Callable[P, R]) -> Callable[P, R]:
    """Run a method taking ``principal`` for that principal's tenant (PostgreSQL's
    row-level security: the owner's own thread is found where the tenant is set)."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def scoped(*args: P.args, **kwargs: P.kwargs) -> R:
        with _tenant_of(signature, args, kwargs):
            return func(*args, **kwargs)

    return scoped


def _aacting(func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """:func:`_acting` for a coroutine method."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    async def scoped(*args: P.args, **kwargs: P.kwargs) -> R:
        with _tenant_of(signature, args, kwargs):
            return await func(*args, **kwargs)

    return scoped


class _Base:
    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self._admin = admin_for(saver)


class Threads(_Base):
    """Sync thread inspection and retention. Methods taking ``principal`` scope to that user."""

    @_acting
    def list_threads(self, principal: Principal | None = None) -> list[ThreadInfo]:
        """Threads newest first; with ``principal``, only that user's threads."""
        return self._admin.run(self._admin.list_threads(_scope(principal)))

    def owner(self, thread_id: str) -> Principal | None:
        """Who owns ``thread_id`` (fixed by its first scoped checkpoint); ``None`` if no one."""
        return self._admin.run(self._admin.owner(_thread(thread_id)))

    @_acting
    def check_owner(self, principal: Principal, thread_id: str) -> None:
        """Raise :class:`ConflictError` (the saver's own answer to such a write) unless
        ``thread_id`` is new or ``principal``'s: the check to run before a graph run."""
        admit_write(thread_id, _principal(principal), self.owner(thread_id) or principal)

    @_acting
    def get(
        self, thread_id: str, checkpoint_id: str | None = None, principal: Principal | None = None
    ) -> CheckpointTuple:
        """A checkpoint (latest by default); NotFoundError if missing."""
        self._owned(principal, thread_id)
        tup = self.saver.get_tuple(checkpoint_config(thread_id, checkpoint_id))
        return require(tup, thread_id, checkpoint_id)

    @_acting
    def history(
        self, thread_id: str, principal: Principal | None = None, limit: int | None = None
    ) -> list[CheckpointInfo]:
        """The thread's root-namespace checkpoints, newest first (the newest ``limit``:
        ``None`` for all of them, ``0`` for none)."""
        count = checked_limit(limit)
        self._owned(principal, thread_id)
        found = self.saver.list(checkpoint_config(thread_id), limit=count)
        return [checkpoint_info(t) for t in found]

    @_acting
    def diff(
        self,
        thread_id: str,
        from_checkpoint: str,
        to_checkpoint: str | None = None,
        principal: Principal | None = None,
    ) -> StateDiff:
        """Channel-level diff from one checkpoint to another (default: the latest)."""
        before = self.get(thread_id, from_checkpoint, principal)
        return diff_states(before, self.get(thread_id, to_checkpoint))

    @_acting
    def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        new_thread_id: str | None = None,
        principal: Principal | None = None,
    ) -> ForkResult:
        """Start a new thread from ``checkpoint_id``; the source thread is left untouched.
        The fork keeps the pending writes LangGraph's replay of that checkpoint would
        (:func:`~engram.stores.hot.contract.carried_writes`): no answer to an interrupt."""
        source = self.get(thread_id, checkpoint_id, principal)
        target = _fork_target(thread_id, new_thread_id)
        taken = self._admin.run(self._admin.owner(target)) is not None
        if taken or self.saver.get_tuple(checkpoint_config(target)) is not None:
            raise in_use(target)
        plan = fork_plan(source, target, principal or self.owner(thread_id))
        saved = self.saver.put(plan.config, plan.checkpoint, plan.metadata, plan.new_versions)
        for task_id, writes in plan.writes.items():
            self.saver.put_writes(saved, writes, task_id)
        return _fork_result(plan, source)

    @_acting
    def prune(
        self, thread_id: str, keep_last: int, principal: Principal | None = None
    ) -> PruneReport:
        """Delete all but the newest ``keep_last`` checkpoints (per namespace)."""
        keep = _keep(keep_last)
        self._owned(principal, thread_id)
        return self._admin.run(self._admin.prune(thread_id, keep), write=True)

    @_acting
    def sizes(
        self, thread_ids: Sequence[str] | None = None, principal: Principal | None = None
    ) -> list[ThreadSize]:
        """Rows and bytes per thread (all threads, or ``thread_ids``)."""
        chosen = check.optional_texts("thread_ids", thread_ids)
        return self._admin.run(self._admin.sizes(chosen, _scope(principal)))

    @_acting
    def delete_user_threads(self, principal: Principal) -> list[str]:
        """Delete every thread of ``principal`` (the ones :meth:`list_threads` lists),
        whole: every namespace, pending write and blob. Returns their ids, newest first."""
        statements = self._admin.delete_threads(_principal(principal))
        return self._admin.run(statements, write=True)

    def compact(self) -> bool:
        """Make deleted rows unrecoverable from storage: SQLite VACUUM + WAL truncation,
        PostgreSQL ``VACUUM FULL`` of the checkpoint tables. False when nothing was
        rewritten (in memory; or a SQLite WAL another connection kept busy)."""
        return self._admin.compact()

    def _owned(self, principal: Principal | None, thread_id: str) -> None:
        _thread(thread_id)
        scope = _scope(principal)
        if scope is not None:
            ensure_owner(scope, thread_id, self.owner(thread_id))


class AsyncThreads(_Base):
    """Async twin of :class:`Threads` (same methods, awaited)."""

    @_aacting
    async def list_threads(self, principal: Principal | None = None) -> list[ThreadInfo]:
        return await self._admin.arun(self._admin.list_threads(_scope(principal)))

    async def owner(self, thread_id: str) -> Principal | None:
        return await self._admin.arun(self._admin.owner(_thread(thread_id)))

    @_aacting
    async def check_owner(self, principal: Principal, thread_id: str) -> None:
        owner = await self.owner(thread_id)
        admit_write(thread_id, _principal(principal), owner or principal)

    @_aacting
    async def get(
        self, thread_id: str, checkpoint_id: str | None = None, principal: Principal | None = None
    ) -> CheckpointTuple:
        await self._owned(principal, thread_id)
        tup = await self.saver.aget_tuple(checkpoint_config(thread_id, checkpoint_id))
        return require(tup, thread_id, checkpoint_id)

    @_aacting
    async def history(
        self, thread_id: str, principal: Principal | None = None, limit: int | None = None
    ) -> list[CheckpointInfo]:
        count = checked_limit(limit)
        await self._owned(principal, thread_id)
        found = self.saver.alist(checkpoint_config(thread_id), limit=count)
        return [checkpoint_info(t) async for t in found]

    @_aacting
    async def diff(
        self,
        thread_id: str,
        from_checkpoint: str,
        to_checkpoint: str | None = None,
        principal: Principal | None = None,
    ) -> StateDiff:
        before = await self.get(thread_id, from_checkpoint, principal)
        return diff_states(before, await self.get(thread_id, to_checkpoint))

    @_aacting
    async def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        new_thread_id: str | None = None,
        principal: Principal | None = None,
    ) -> ForkResult:
        source = await self.get(thread_id, checkpoint_id, principal)
        target = _fork_target(thread_id, new_thread_id)
        taken = await self._admin.arun(self._admin.owner(target)) is not None
        if taken or await self.saver.aget_tuple(checkpoint_config(target)) is not None:
            raise in_use(target)
        plan = fork_plan(source, target, principal or await self.owner(thread_id))
        saved = await self.saver.aput(
            plan.config, plan.checkpoint, plan.metadata, plan.new_versions
        )
        for task_id, writes in plan.writes.items():
            await self.saver.aput_writes(saved, writes, task_id)
        return _fork_result(plan, source)

    @_aacting
    async def prune(
        self, thread_id: str, keep_last: int, principal: Principal | None = None
    ) -> PruneReport:
        keep = _keep(keep_last)
        await self._owned(principal, thread_id)
        return await self._admin.arun(self._admin.prune(thread_id, keep), write=True)

    @_aacting
    async def sizes(
        self, thread_ids: Sequence[str] | None = None, principal: Principal | None = None
    ) -> list[ThreadSize]:
        chosen = check.optional_texts("thread_ids", thread_ids)
        return await self._admin.arun(self._admin.sizes(chosen, _scope(principal)))

    @_aacting
    async def delete_user_threads(self, principal: Principal) -> list[str]:
        statements = self._admin.delete_threads(_principal(principal))
        return await self._admin.arun(statements, write=True)

    async def compact(self) -> bool:
        return await self._admin.acompact()

    async def _owned(self, principal: Principal | None, thread_id: str) -> None:
        _thread(thread_id)
        scope = _scope(principal)
        if scope is not None:
            ensure_owner(scope, thread_id, await self.owner(thread_id))
