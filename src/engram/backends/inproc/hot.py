"""Hot tier in memory: LangGraph's ``InMemorySaver``, with listing, sizes and retention.

The operations work on the saver's own dictionaries (``storage``, ``writes``,
``blobs``). They are statement generators that yield nothing, so the same
:class:`~engram.stores.hot.contract.Statements` runner serves every backend.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from engram._principal import Principal
from engram.config import StoreURL
from engram.errors import ConfigError, ConflictError
from engram.stores.hot.contract import (
    PruneReport,
    R,
    SaverOptions,
    Statements,
    ThreadInfo,
    ThreadSize,
    is_stale_call,
    owner_of,
    prune_targets,
    run_ids_of,
    valid_thread_id,
)
from engram.stores.hot.owned import AsyncOwnedSaver, OwnedSaver

_DELTA_KEY = "counters_since_delta_snapshot"

Saved = tuple[tuple[str, bytes], tuple[str, bytes], str | None]


def _metadata(saver: InMemorySaver, saved: Saved) -> dict[str, Any]:
    return dict(saver.serde.loads_typed(saved[1]))


_OWNERS: weakref.WeakKeyDictionary[InMemorySaver, dict[str, Principal]] = (
    weakref.WeakKeyDictionary()
)
_OWNERS_LOCK = threading.Lock()


def _owner_of(saver: InMemorySaver, thread_id: str) -> Principal | None:
    with _OWNERS_LOCK:
        return _recorded(saver, thread_id)


def _recorded(saver: InMemorySaver, thread_id: str) -> Principal | None:
    """The thread's owner, fixed by its first scoped write and kept beside the saver; for
    a thread written before owners were kept, the one its first root checkpoint names."""
    owners = _OWNERS.setdefault(saver, {})
    if thread_id not in owners:
        root = saver.storage.get(thread_id, {}).get("", {})
        tenant, user = owner_of(_metadata(saver, root[min(root)])) if root else (None, None)
        if isinstance(tenant, str) and isinstance(user, str):
            owners[thread_id] = Principal(tenant, user)
    return owners.get(thread_id)


def _owned(saver: InMemorySaver, thread_id: str, owner: Principal | None) -> bool:
    return owner is None or _owner_of(saver, thread_id) == owner


def owner(saver: InMemorySaver, thread_id: str) -> Statements[Principal | None]:
    yield from ()
    return _owner_of(saver, thread_id)


def claim(saver: InMemorySaver, thread_id: str, principal: Principal) -> Statements[Principal]:
    yield from ()
    with _OWNERS_LOCK:
        found = _recorded(saver, thread_id)
        return found if found is not None else _OWNERS[saver].setdefault(thread_id, principal)


def _holds(saver: InMemorySaver, thread_id: str) -> bool:
    """Whether anything of the thread is stored (a checkpoint, a pending write)."""
    stored = any(saver.storage.get(thread_id, {}).values())
    return stored or any(key[0] == thread_id for key in list(saver.writes))


def settle(
    saver: InMemorySaver, thread_id: str, principal: Principal
) -> Statements[Principal | None]:
    yield from ()
    with _OWNERS_LOCK:
        found = _recorded(saver, thread_id)
        if found is None and _holds(saver, thread_id):
            found = _OWNERS[saver].setdefault(thread_id, principal)
        return found


def forget_owner(saver: InMemorySaver, thread_id: str) -> None:
    with _OWNERS_LOCK:
        _OWNERS.setdefault(saver, {}).pop(thread_id, None)


def list_threads(saver: InMemorySaver, owner: Principal | None) -> Statements[list[ThreadInfo]]:
    yield from ()
    found = []
    for thread_id, namespaces in list(saver.storage.items()):
        root = namespaces.get("", {})
        if root and _owned(saver, thread_id, owner):
            last = max(root)
            recorded = _owner_of(saver, thread_id)
            tenant, user = recorded.namespace if recorded else (None, None)
            found.append(ThreadInfo(thread_id, tenant, user, len(root), last))
    return sorted(found, key=lambda t: t.last_checkpoint_id, reverse=True)


def sizes(
    saver: InMemorySaver, thread_ids: Sequence[str] | None, owner: Principal | None
) -> Statements[list[ThreadSize]]:
    yield from ()
    wanted = set(saver.storage) if thread_ids is None else set(thread_ids) & set(saver.storage)
    return [_size(saver, t) for t in sorted(wanted) if _thread_owned(saver, t, owner)]


def _thread_owned(saver: InMemorySaver, thread_id: str, owner: Principal | None) -> bool:
    saved = [s for ns in saver.storage[thread_id].values() for s in ns.values()]
    return bool(saved) and _owned(saver, thread_id, owner)


def _size(saver: InMemorySaver, thread_id: str) -> ThreadSize:
    saved = [s for ns in saver.storage[thread_id].values() for s in ns.values()]
    writes = [w for k, ws in saver.writes.items() if k[0] == thread_id for w in ws.values()]
    blobs = [b for k, b in saver.blobs.items() if k[0] == thread_id]
    return ThreadSize(
        thread_id,
        checkpoints=len(saved),
        writes=len(writes),
        blobs=len(blobs),
        checkpoint_bytes=sum(len(c[1]) + len(m[1]) for c, m, _ in saved),
        write_bytes=sum(len(w[2][1]) for w in writes),
        blob_bytes=sum(len(b[1] or b"") for b in blobs),
    )


def prune(saver: InMemorySaver, thread_id: str, keep_last: int) -> Statements[PruneReport]:
    """Keep the newest ``keep_last`` checkpoints per namespace, their writes and blobs.

    Subgraph call namespaces whose root checkpoint goes are deleted whole.
    """
    yield from ()
    namespaces = saver.storage.get(thread_id, {})
    saved = [s for ns in namespaces.values() for s in ns.values()]
    if any(_DELTA_KEY in _metadata(saver, s) for s in saved):
        raise ConflictError(f"thread {thread_id!r} uses a DeltaChannel; pruning would lose state")
    counts = [0, 0, 0]  # checkpoints, writes, blobs
    root_cutoff: str | None = None
    for ns in sorted(namespaces):
        checkpoints = namespaces[ns]
        newest = sorted(checkpoints, reverse=True)
        if not newest:
            continue
        root = _metadata(saver, checkpoints[newest[0]]).get("parents", {}).get("") if ns else None
        keep = 0 if is_stale_call(ns, root, root_cutoff) else keep_last
        if not ns and len(newest) > keep:
            root_cutoff = newest[keep - 1]
        found = _prune_namespace(saver, (thread_id, ns), checkpoints, newest[keep:])
        counts = [a + b for a, b in zip(counts, found, strict=True)]
    kept = sum(len(c) for c in namespaces.values())
    return PruneReport(thread_id, kept, counts[0], counts[1], counts[2])


def _prune_namespace(
    saver: InMemorySaver, scope: tuple[str, str], checkpoints: dict[str, Saved], doomed: list[str]
) -> list[int]:
    if not doomed:
        return [0, 0, 0]
    freed = _versions(saver, [checkpoints[c] for c in doomed])
    writes = blobs = 0
    for cid in doomed:
        del checkpoints[cid]
        writes += len(saver.writes.pop((*scope, cid), {}))
    for cid, (ckpt, meta, parent) in list(checkpoints.items()):
        if parent is not None and parent not in checkpoints:
            checkpoints[cid] = (ckpt, meta, None)
    for channel, version in freed - _versions(saver, list(checkpoints.values())):
        blobs += saver.blobs.pop((*scope, channel, version), None) is not None
    return [len(doomed), writes, blobs]


def delete_threads(saver: InMemorySaver, owner: Principal) -> Statements[list[str]]:
    """Delete every thread of ``owner``; their ids: the ones :func:`list_threads` finds,
    newest first, then any holding no checkpoint (pending writes only, or nothing)."""
    found = [t.thread_id for t in (yield from list_threads(saver, owner))]
    with _OWNERS_LOCK:
        owned = {t for t, who in _OWNERS.setdefault(saver, {}).items() if who == owner}
    found += sorted(owned - set(found))
    for thread_id in found:
        saver.delete_thread(thread_id)
        forget_owner(saver, thread_id)
    return found


def prune_threads(
    saver: InMemorySaver, thread_ids: Sequence[str], strategy: str
) -> Statements[None]:
    """LangGraph's ``prune``: ``keep_latest`` is :func:`prune` with N = 1."""
    for thread_id in prune_targets(thread_ids, strategy):
        if strategy == "delete":
            saver.delete_thread(thread_id)
            forget_owner(saver, thread_id)
        else:
            yield from prune(saver, thread_id, 1)


def copy_thread(saver: InMemorySaver, source: str, target: str) -> Statements[None]:
    yield from ()
    for ns, checkpoints in saver.storage.get(source, {}).items():
        saver.storage[target][ns].update(checkpoints)
    for (thread_id, ns, cid), writes in list(saver.writes.items()):
        if thread_id == source:
            saver.writes[(target, ns, cid)] = dict(writes)
    for (thread_id, ns, channel, version), blob in list(saver.blobs.items()):
        if thread_id == source:
            saver.blobs[(target, ns, channel, version)] = blob
    with _OWNERS_LOCK:
        source_owner = _recorded(saver, source)
        if source_owner is not None:
            _OWNERS[saver].setdefault(target, source_owner)


def delete_for_runs(saver: InMemorySaver, run_ids: Sequence[str]) -> Statements[None]:
    yield from ()
    runs = set(run_ids_of(run_ids))
    for thread_id, namespaces in list(saver.storage.items()):
        for ns, checkpoints in namespaces.items():
            doomed = [
                c for c, s in checkpoints.items() if _metadata(saver, s).get("run_id") in runs
            ]
            _prune_namespace(saver, (thread_id, ns), checkpoints, doomed)


def _versions(saver: InMemorySaver, saved: list[Saved]) -> set[tuple[str, Any]]:
    found: set[tuple[str, Any]] = set()
    for ckpt, _, _ in saved:
        found.update(saver.serde.loads_typed(ckpt)["channel_versions"].items())
    return found


def _drive(statements: Statements[R]) -> R:
    try:
        next(statements)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    raise ConfigError("in-memory hot tier operations run no statements")


class InProcAdmin:
    """Listing, sizes, retention and erasure over an ``InMemorySaver`` (no I/O)."""

    def __init__(self, saver: BaseCheckpointSaver[Any]) -> None:
        if not isinstance(saver, InMemorySaver):
            raise ConfigError(f"not an InMemorySaver: {type(saver).__name__}")
        self._saver = saver

    def list_threads(self, owner: Principal | None) -> Statements[list[ThreadInfo]]:
        return list_threads(self._saver, owner)

    def owner(self, thread_id: str) -> Statements[Principal | None]:
        return owner(self._saver, thread_id)

    def claim(self, thread_id: str, principal: Principal) -> Statements[Principal]:
        return claim(self._saver, thread_id, principal)

    def settle(self, thread_id: str, principal: Principal) -> Statements[Principal | None]:
        return settle(self._saver, thread_id, principal)

    def sizes(
        self, thread_ids: Sequence[str] | None, owner: Principal | None
    ) -> Statements[list[ThreadSize]]:
        return sizes(self._saver, thread_ids, owner)

    def prune(self, thread_id: str, keep_last: int) -> Statements[PruneReport]:
        return prune(self._saver, thread_id, keep_last)

    def delete_threads(self, owner: Principal) -> Statements[list[str]]:
        return delete_threads(self._saver, owner)

    def compact(self) -> bool:
        """Nothing to compact: deleted entries left the process's dictionaries."""
        return False

    async def acompact(self) -> bool:
        return self.compact()

    def run(self, statements: Statements[R], *, write: bool = False) -> R:
        return _drive(statements)

    async def arun(self, statements: Statements[R], *, write: bool = False) -> R:
        return _drive(statements)


class InProcSaver(OwnedSaver, AsyncOwnedSaver, InMemorySaver):
    """LangGraph's ``InMemorySaver`` with thread owners plus the optional ``prune`` /
    ``copy_thread`` / ``delete_for_runs`` capabilities it lacks (checked by LangGraph's
    conformance suite)."""

    def delete_thread(self, thread_id: str) -> None:
        thread = valid_thread_id(thread_id)
        super().delete_thread(thread)
        forget_owner(self, thread)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        _drive(prune_threads(self, thread_ids, strategy))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source, target = valid_thread_id(source_thread_id), valid_thread_id(target_thread_id)
        _drive(copy_thread(self, source, target))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        _drive(delete_for_runs(self, run_ids))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)


@contextmanager
def open_sync(url: StoreURL, options: SaverOptions) -> Iterator[InProcSaver]:
    """A new in-process saver (``memory://``): it lives as long as the object."""
    yield InProcSaver(serde=options.serde)


@asynccontextmanager
async def open_async(url: StoreURL, options: SaverOptions) -> AsyncIterator[InProcSaver]:
    """A new in-process saver; the same object serves sync and async callers."""
    yield InProcSaver(serde=options.serde)


def admin_for(saver: BaseCheckpointSaver[Any]) -> InProcAdmin | None:
    """The admin of a LangGraph ``InMemorySaver``, else ``None``."""
    return InProcAdmin(saver) if isinstance(saver, InMemorySaver) else None
