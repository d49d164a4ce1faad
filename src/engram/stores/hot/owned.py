"""The guard every engram saver carries, ahead of the LangGraph saver it extends.

- A checkpoint or pending write for a thread another principal owns is refused before
  it is stored; the first scoped write of a new thread fixes its owner.
- A read that acts for a principal finds no thread another principal owns.
- Every config the saver hands back (a checkpoint's and its parent's, ``put``'s) names
  the principal of the config it was given, so LangGraph's time-travel idiom
  (``graph.invoke(None, snapshot.config)``) acts for the same principal.
- A thread id no write could store is refused on reads too, as on writes.

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
from engram.stores.hot.contract import (
    HotAdmin,
    acting_as,
    admit_write,
    declared_owner,
    owner_of,
    thread_of,
    valid_thread_id,
)

_OWNERS_READY = "_engram_owners_ready"


def owners_ready(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether a backend has set up the owners table for ``saver`` (once per saver)."""
    return bool(getattr(saver, _OWNERS_READY, False))


def mark_owners_ready(saver: BaseCheckpointSaver[Any]) -> None:
    setattr(saver, _OWNERS_READY, True)


def _reader(config: RunnableConfig | None) -> tuple[Principal | None, str | None]:
    """The principal a read acts for (``None``: the application's own read) and the
    thread it names (``None``: every thread)."""
    if config is None:
        return None, None
    thread = config.get("configurable", {}).get("thread_id")
    return declared_owner(config), None if thread is None else valid_thread_id(thread)


def _theirs(reader: Principal | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether a checkpoint listed across threads is another principal's."""
    if reader is None:
        return False
    tenant, user = owner_of(metadata or {})
    return tenant is not None and (tenant, user) != reader.namespace


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
    thread fixes its owner (one atomic claim per write). A read that acts for a
    principal (``thread_config(thread_id, principal)``) finds no thread another
    principal owns, as for an id never used, and gets back configs naming it."""

    def _hidden(self, config: RunnableConfig | None) -> tuple[bool, Principal | None]:
        reader, thread = _reader(config)
        if reader is None or thread is None:
            return False, reader
        admin = _admin(self)
        owner = admin.run(admin.owner(thread))
        return owner is not None and owner != reader, reader

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        hidden, reader = self._hidden(config)
        found = None if hidden else super().get_tuple(config)
        return None if found is None else _read_by(found, reader)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        hidden, reader = self._hidden(config)
        if hidden:
            return
        for found in super().list(config, filter=filter, before=before, limit=limit):
            if not _theirs(reader, found.metadata):
                yield _read_by(found, reader)

    def admit(self, config: RunnableConfig, metadata: Mapping[str, Any] | None) -> Principal | None:
        """The principal a write acts for, once it may (``None``: the application)."""
        thread_id, writer = thread_of(config), declared_owner(config, metadata)
        if writer is not None:  # an unscoped write is the application's own
            admin = _admin(self)
            owner = admin.run(admin.claim(thread_id, writer), write=True)
            admit_write(thread_id, writer, owner)
        return writer

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        writer = self.admit(config, metadata)
        return acting_as(super().put(config, checkpoint, metadata, new_versions), writer)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.admit(config, None)
        super().put_writes(config, writes, task_id, task_path)


class AsyncOwnedSaver(BaseCheckpointSaver[str]):
    """Async half of :class:`OwnedSaver` (same rules, awaited)."""

    async def _ahidden(self, config: RunnableConfig | None) -> tuple[bool, Principal | None]:
        reader, thread = _reader(config)
        if reader is None or thread is None:
            return False, reader
        admin = _admin(self)
        owner = await admin.arun(admin.owner(thread))
        return owner is not None and owner != reader, reader

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        hidden, reader = await self._ahidden(config)
        found = None if hidden else await super().aget_tuple(config)
        return None if found is None else _read_by(found, reader)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        hidden, reader = await self._ahidden(config)
        if hidden:
            return
        async for found in super().alist(config, filter=filter, before=before, limit=limit):
            if not _theirs(reader, found.metadata):
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

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        writer = await self.aadmit(config, metadata)
        saved = await super().aput(config, checkpoint, metadata, new_versions)
        return acting_as(saved, writer)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.aadmit(config, None)
        await super().aput_writes(config, writes, task_id, task_path)
