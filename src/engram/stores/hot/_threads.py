"""Inspection, time travel and retention over any engram hot-tier saver.

:class:`Threads` (sync) and :class:`AsyncThreads` wrap a LangGraph saver opened
by :func:`engram.stores.hot.open_checkpointer`. They differ only in how they
call the saver and run backend statements; the logic lives in
:mod:`engram.stores.hot.contract` and in the backends' statement generators.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from engram._principal import Principal, validate_id
from engram.errors import ConflictError, InvalidInputError
from engram.stores.hot._open import admin_for
from engram.stores.hot.contract import (
    CheckpointInfo,
    ForkPlan,
    ForkResult,
    PruneReport,
    StateDiff,
    ThreadInfo,
    ThreadSize,
    checkpoint_config,
    checkpoint_info,
    diff_states,
    ensure_owner,
    fork_plan,
    require,
)


def _keep(keep_last: int) -> int:
    if not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 1:
        raise InvalidInputError(f"keep_last must be an integer >= 1, got {keep_last!r}")
    return keep_last


def _principal(principal: Principal) -> Principal:
    if not isinstance(principal, Principal):
        raise InvalidInputError(f"a Principal is required, got {type(principal).__name__}")
    return principal


def _fork_target(thread_id: str, new_thread_id: str | None) -> str:
    return validate_id("new_thread_id", new_thread_id or f"{thread_id}-fork-{uuid.uuid4().hex[:8]}")


def _fork_result(plan: ForkPlan, source: CheckpointTuple) -> ForkResult:
    src = source.config["configurable"]
    return ForkResult(
        src["thread_id"],
        src["checkpoint_id"],
        plan.config["configurable"]["thread_id"],
        plan.checkpoint["id"],
    )


class _Base:
    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        self.saver = saver
        self._admin = admin_for(saver)


class Threads(_Base):
    """Sync thread inspection and retention. Methods taking ``principal`` scope to that user."""

    def list_threads(self, principal: Principal | None = None) -> list[ThreadInfo]:
        """Threads newest first; with ``principal``, only that user's threads."""
        return self._admin.run(self._admin.list_threads(principal))

    def check_owner(self, principal: Principal, thread_id: str) -> None:
        """Raise AccessDeniedError if ``thread_id`` exists and belongs to someone else."""
        ensure_owner(principal, thread_id, self.saver.get_tuple(checkpoint_config(thread_id)))

    def get(
        self, thread_id: str, checkpoint_id: str | None = None, principal: Principal | None = None
    ) -> CheckpointTuple:
        """A checkpoint (latest by default); NotFoundError if missing."""
        self._owned(principal, thread_id)
        tup = self.saver.get_tuple(checkpoint_config(thread_id, checkpoint_id))
        return require(tup, thread_id, checkpoint_id)

    def history(
        self, thread_id: str, principal: Principal | None = None, limit: int | None = None
    ) -> list[CheckpointInfo]:
        """The thread's root-namespace checkpoints, newest first."""
        self._owned(principal, thread_id)
        found = self.saver.list(checkpoint_config(thread_id), limit=limit)
        return [checkpoint_info(t) for t in found]

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

    def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        new_thread_id: str | None = None,
        principal: Principal | None = None,
    ) -> ForkResult:
        """Start a new thread from ``checkpoint_id``; the source thread is left untouched."""
        source = self.get(thread_id, checkpoint_id, principal)
        target = _fork_target(thread_id, new_thread_id)
        if self.saver.get_tuple(checkpoint_config(target)) is not None:
            raise ConflictError(f"thread {target!r} already exists")
        plan = fork_plan(source, target, principal)
        saved = self.saver.put(plan.config, plan.checkpoint, plan.metadata, plan.new_versions)
        for task_id, writes in plan.writes.items():
            self.saver.put_writes(saved, writes, task_id)
        return _fork_result(plan, source)

    def prune(
        self, thread_id: str, keep_last: int, principal: Principal | None = None
    ) -> PruneReport:
        """Delete all but the newest ``keep_last`` checkpoints (per namespace)."""
        keep = _keep(keep_last)
        self._owned(principal, thread_id)
        return self._admin.run(self._admin.prune(thread_id, keep), write=True)

    def sizes(
        self, thread_ids: Sequence[str] | None = None, principal: Principal | None = None
    ) -> list[ThreadSize]:
        """Rows and bytes per thread (all threads, or ``thread_ids``)."""
        return self._admin.run(self._admin.sizes(thread_ids, principal))

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
        if principal is not None:
            ensure_owner(principal, thread_id, self.get(thread_id))


class AsyncThreads(_Base):
    """Async twin of :class:`Threads` (same methods, awaited)."""

    async def list_threads(self, principal: Principal | None = None) -> list[ThreadInfo]:
        return await self._admin.arun(self._admin.list_threads(principal))

    async def check_owner(self, principal: Principal, thread_id: str) -> None:
        tup = await self.saver.aget_tuple(checkpoint_config(thread_id))
        ensure_owner(principal, thread_id, tup)

    async def get(
        self, thread_id: str, checkpoint_id: str | None = None, principal: Principal | None = None
    ) -> CheckpointTuple:
        await self._owned(principal, thread_id)
        tup = await self.saver.aget_tuple(checkpoint_config(thread_id, checkpoint_id))
        return require(tup, thread_id, checkpoint_id)

    async def history(
        self, thread_id: str, principal: Principal | None = None, limit: int | None = None
    ) -> list[CheckpointInfo]:
        await self._owned(principal, thread_id)
        found = self.saver.alist(checkpoint_config(thread_id), limit=limit)
        return [checkpoint_info(t) async for t in found]

    async def diff(
        self,
        thread_id: str,
        from_checkpoint: str,
        to_checkpoint: str | None = None,
        principal: Principal | None = None,
    ) -> StateDiff:
        before = await self.get(thread_id, from_checkpoint, principal)
        return diff_states(before, await self.get(thread_id, to_checkpoint))

    async def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        new_thread_id: str | None = None,
        principal: Principal | None = None,
    ) -> ForkResult:
        source = await self.get(thread_id, checkpoint_id, principal)
        target = _fork_target(thread_id, new_thread_id)
        if await self.saver.aget_tuple(checkpoint_config(target)) is not None:
            raise ConflictError(f"thread {target!r} already exists")
        plan = fork_plan(source, target, principal)
        saved = await self.saver.aput(
            plan.config, plan.checkpoint, plan.metadata, plan.new_versions
        )
        for task_id, writes in plan.writes.items():
            await self.saver.aput_writes(saved, writes, task_id)
        return _fork_result(plan, source)

    async def prune(
        self, thread_id: str, keep_last: int, principal: Principal | None = None
    ) -> PruneReport:
        keep = _keep(keep_last)
        await self._owned(principal, thread_id)
        return await self._admin.arun(self._admin.prune(thread_id, keep), write=True)

    async def sizes(
        self, thread_ids: Sequence[str] | None = None, principal: Principal | None = None
    ) -> list[ThreadSize]:
        return await self._admin.arun(self._admin.sizes(thread_ids, principal))

    async def delete_user_threads(self, principal: Principal) -> list[str]:
        statements = self._admin.delete_threads(_principal(principal))
        return await self._admin.arun(statements, write=True)

    async def compact(self) -> bool:
        return await self._admin.acompact()

    async def _owned(self, principal: Principal | None, thread_id: str) -> None:
        if principal is not None:
            ensure_owner(principal, thread_id, await self.get(thread_id))
