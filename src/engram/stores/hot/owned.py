"""The guard every engram saver carries, ahead of the LangGraph saver it extends.

- A checkpoint or pending write for a thread another principal owns is refused before
  it is stored; the first scoped write of a new thread fixes its owner. Once stored, the
  owner is checked again (:meth:`OwnedSaver.settle`): an erasure of the writer's threads
  landing in between leaves nothing stored without its owner.
- A read that acts for a principal finds no thread another principal owns (its config
  names one thread: a listing across threads is given no config, and acts for no one).
- Every config the saver hands back (a checkpoint's and its parent's, ``put``'s) names
  the principal of the config it was given, so LangGraph's time-travel idiom
  (``graph.invoke(None, snapshot.config)``) acts for the same principal.
- An id no write could store (thread, checkpoint, namespace, task, channel), a filter
  no backend can match or a limit that is not a count is refused on every call
  (:mod:`._calls`), reads included.

:class:`OwnedSaver` and :class:`AsyncOwnedSaver` differ only in awaiting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from engram._principal import Principal
from engram.stores.hot._calls import (
    checked_config,
    checked_list,
    checked_put,
    checked_writes,
)
from engram.stores.hot.contract import (
    HotAdmin,
    acting_as,
    admit_write,
    declared_owner,
    thread_of,
)

_OWNERS_READY = "_engram_owners_ready"


def owners_ready(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether a backend has set up the owners table for ``saver`` (once per saver)."""
    return bool(getattr(saver, _OWNERS_READY, False))


def mark_owners_ready(saver: BaseCheckpointSaver[Any]) -> None:
    setattr(saver, _OWNERS_READY, True)


def _reader(config: RunnableConfig | None) -> Principal | None:
    """The principal a read acts for (``None``: the application's own read)."""
    return None if config is None else declared_owner(config)


def _hidden(reader: Principal | None, owner: Principal | None) -> bool:
    """Whether a thread owned by ``owner`` reads, for ``reader``, as a missing one."""
    return reader is not None and owner is not None and owner != reader


def _read_by(found: CheckpointTuple, reader: Principal | None) -> CheckpointTuple:
    """``found`` with its configs naming ``reader``: LangGraph hands them to the caller."""
    parent = found.parent_config
    return found._replace(
        config=acting_as(found.config, reader),
        parent_config=None if parent is None else acting_as(parent, reader),
    )


def _admin(saver: BaseCheckpointSaver[Any]) -> HotAdmin:
    """The backend admin that records owners: the tier's ``admin_for`` the saver."""
    from engram.stores.hot._open import admin_for  # the table imports the backends

    return admin_for(saver)


class OwnedSaver(BaseCheckpointSaver[str]):
    """Sync half of the guard: a checkpoint or pending write for a thread owned by
    another principal is refused before it is stored; the first scoped write of a new
    thread fixes its owner (one atomic claim per write, checked again once stored). A
    read that acts for a principal (``thread_config(thread_id, principal)``) finds no
    thread another principal owns, as for an id never used, and gets back configs
    naming it. Every id a call takes is checked first (:mod:`._calls`)."""

    def _owner(self, thread_id: str) -> Principal | None:
        admin = _admin(self)
        return admin.run(admin.owner(thread_id))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread, reader = checked_config(config), _reader(config)
        if reader and thread and _hidden(reader, self._owner(thread)):
            return None
        found = super().get_tuple(config)
        return None if found is None else _read_by(found, reader)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        thread, reader = checked_list(config, filter, before, limit), _reader(config)
        if limit == 0 or (reader and thread and _hidden(reader, self._owner(thread))):
            return
        for found in super().list(config, filter=filter, before=before, limit=limit):
            yield _read_by(found, reader)

    def admit(self, config: RunnableConfig, metadata: Mapping[str, Any] | None) -> Principal | None:
        """The principal a write acts for, once it may (``None``: the application)."""
        thread_id, writer = thread_of(config), declared_owner(config, metadata)
        if writer is not None:  # an unscoped write is the application's own
            admin = _admin(self)
            owner = admin.run(admin.claim(thread_id, writer), write=True)
            admit_write(thread_id, writer, owner)
        return writer

    def settle(self, config: RunnableConfig, writer: Principal | None) -> None:
        """Once a write is stored, its thread is still its writer's: an erasure of the
        writer's threads that landed since :meth:`admit` leaves what was stored after it
        recorded as the writer's (what was stored before went with the erasure)."""
        if writer is not None:
            thread_id, admin = thread_of(config), _admin(self)
            owner = admin.run(admin.settle(thread_id, writer), write=True)
            admit_write(thread_id, writer, owner or writer)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        checked_put(config, checkpoint, metadata)
        writer = self.admit(config, metadata)
        saved = super().put(config, checkpoint, metadata, new_versions)
        self.settle(config, writer)
        return acting_as(saved, writer)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        checked_writes(config, writes, task_id, task_path)
        writer = self.admit(config, None)
        super().put_writes(config, writes, task_id, task_path)
        self.settle(config, writer)


class AsyncOwnedSaver(BaseCheckpointSaver[str]):
    """Async half of :class:`OwnedSaver` (same rules, awaited)."""

    async def _aowner(self, thread_id: str) -> Principal | None:
        admin = _admin(self)
        return await admin.arun(admin.owner(thread_id))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread, reader = checked_config(config), _reader(config)
        if reader and thread and _hidden(reader, await self._aowner(thread)):
            return None
        found = await super().aget_tuple(config)
        return None if found is None else _read_by(found, reader)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        thread, reader = checked_list(config, filter, before, limit), _reader(config)
        if limit == 0 or (reader and thread and _hidden(reader, await self._aowner(thread))):
            return
        async for found in super().alist(config, filter=filter, before=before, limit=limit):
            yield _read_by(found, reader)

    async def aadmit(
        self, config: RunnableConfig, metadata: Mapping[str, Any] | None
    ) -> Principal | None:
        thread_id, writer = thread_of(config), declared_owner(config, metadata)
        if writer is not None:  # an unscoped write is the application's own
            admin = _admin(self)
            owner = await admin.arun(admin.claim(thread_id, writer), write=True)
            admit_write(thread_id, writer, owner)
        return writer

    async def asettle(self, config: RunnableConfig, writer: Principal | None) -> None:
        if writer is not None:
            thread_id, admin = thread_of(config), _admin(self)
            owner = await admin.arun(admin.settle(thread_id, writer), write=True)
            admit_write(thread_id, writer, owner or writer)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        checked_put(config, checkpoint, metadata)
        writer = await self.aadmit(config, metadata)
        saved = await super().aput(config, checkpoint, metadata, new_versions)
        await self.asettle(config, writer)
        return acting_as(saved, writer)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        checked_writes(config, writes, task_id, task_path)
        writer = await self.aadmit(config, None)
        await super().aput_writes(config, writes, task_id, task_path)
        await self.asettle(config, writer)
