"""``/v1/threads``: the user's threads (list, history, state, diff, fork, prune)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import APIRouter, Path, Query

from engram._principal import Principal, tenant_scope
from engram.server import _models as m
from engram.server._deps import Layer, Paging, Reader, Writer, paginate
from engram.server._problems import responses as problems
from engram.stores.hot import Threads

router = APIRouter(prefix="/v1/threads", tags=["threads"])
ThreadId = Annotated[str, Path(min_length=1, max_length=m.ID)]
CheckpointId = Annotated[str | None, Query(min_length=1, max_length=m.ID)]


@contextmanager
def _threads(layer: Layer, who: Principal) -> Iterator[Threads]:
    with tenant_scope(who.tenant_id):
        yield Threads(layer.memory.checkpointer)


@router.get("")
def list_threads(who: Reader, layer: Layer, page: Paging) -> m.Page[m.ThreadOut]:
    """The user's threads, newest first."""
    with _threads(layer, who) as threads:
        items, cursor = paginate(threads.list_threads(who), page)
    return m.Page[m.ThreadOut](items=[m.ThreadOut.of(t) for t in items], next_cursor=cursor)


@router.get("/{thread_id}/history", responses=problems(404))
def history(
    thread_id: ThreadId, who: Reader, layer: Layer, page: Paging
) -> m.Page[m.CheckpointOut]:
    """The thread's checkpoints, newest first."""
    with _threads(layer, who) as threads:
        items, cursor = paginate(threads.history(thread_id, who), page)
    return m.Page[m.CheckpointOut](items=[m.CheckpointOut.of(c) for c in items], next_cursor=cursor)


@router.get("/{thread_id}/state", responses=problems(404))
def state(
    thread_id: ThreadId, who: Reader, layer: Layer, checkpoint_id: CheckpointId = None
) -> m.StateOut:
    """The thread's state at a checkpoint (latest by default)."""
    with _threads(layer, who) as threads:
        found = threads.get(thread_id, checkpoint_id, who)
    values = m.plain(found.checkpoint["channel_values"])
    return m.StateOut(thread_id=thread_id, checkpoint_id=found.checkpoint["id"], values=values)


@router.get("/{thread_id}/diff", responses=problems(404))
def diff(
    thread_id: ThreadId,
    who: Reader,
    layer: Layer,
    from_checkpoint: Annotated[str, Query(alias="from", min_length=1, max_length=m.ID)],
    to_checkpoint: Annotated[str | None, Query(alias="to", min_length=1, max_length=m.ID)] = None,
) -> m.DiffOut:
    """What changed from one checkpoint to another (default: the latest)."""
    with _threads(layer, who) as threads:
        found = threads.diff(thread_id, from_checkpoint, to_checkpoint, who)
    return m.diff_out(found, m.plain)


@router.post("/{thread_id}/fork", status_code=201, responses=problems(404, 409))
def fork(thread_id: ThreadId, body: m.ForkIn, who: Writer, layer: Layer) -> m.ForkOut:
    """Start a new thread from a checkpoint; the source is left untouched."""
    with _threads(layer, who) as threads:
        return m.ForkOut.of(threads.fork(thread_id, body.checkpoint_id, body.new_thread_id, who))


@router.post("/{thread_id}/prune", responses=problems(404, 409))
def prune(thread_id: ThreadId, body: m.PruneIn, who: Writer, layer: Layer) -> m.PruneOut:
    """Delete all but the newest ``keep_last`` checkpoints."""
    with _threads(layer, who) as threads:
        return m.PruneOut.of(threads.prune(thread_id, body.keep_last, who))
