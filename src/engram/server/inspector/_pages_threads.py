"""Threads: checkpoint history, state, diff, fork, prune (with a preview), approval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import Response

from engram._principal import Principal, tenant_scope
from engram.agent import ThreadStatus, analyst_over
from engram.errors import EngramError, NotFoundError
from engram.server._models import plain
from engram.server.inspector._web import Acting, Inspector, Parts, Seen, back, render
from engram.stores.hot import Threads

router = APIRouter()
ThreadId = Annotated[str, Path(min_length=1, max_length=256)]
Checkpoint = Annotated[str, Query(min_length=1, max_length=256)]


@contextmanager
def _threads(parts: Inspector, who: Principal) -> Iterator[Threads]:
    with tenant_scope(who.tenant_id):
        yield Threads(parts.served.memory.checkpointer)


def shown(value: Any) -> str:
    """A state value as indented JSON text (escaped by the template)."""
    return json.dumps(plain(value), indent=1, ensure_ascii=False, sort_keys=True)


@router.get("/threads")
def threads(request: Request, parts: Parts, who: Seen) -> Response:
    """The user's threads, newest first."""
    principal = who.acting("read")
    with _threads(parts, principal) as hot:
        found = hot.list_threads(principal)
    return render(request, "threads.html", {"threads": found}, who=who)


def _paused(parts: Inspector, who: Principal, thread_id: str) -> ThreadStatus | None:
    """The agent run paused on ``thread_id`` for approval, if there is one."""
    analyst = analyst_over(parts.served.memory)
    if analyst is None:
        return None
    try:
        status = analyst.status(who, thread_id)
    except EngramError:
        return None
    return status if status.stage == "awaiting_approval" and status.draft else None


@router.get("/threads/{thread_id}")
def thread(request: Request, parts: Parts, who: Seen, thread_id: ThreadId) -> Response:
    """A thread's checkpoints, newest first, and a paused run's exact draft."""
    principal = who.acting("read")
    with _threads(parts, principal) as hot:
        history = hot.history(thread_id, principal)
    context = {
        "thread_id": thread_id,
        "history": history,
        "paused": _paused(parts, principal, thread_id),
        "may_write": who.grant.allows("write"),
    }
    return render(request, "thread.html", context, who=who)


@router.get("/threads/{thread_id}/state")
def state(
    request: Request, parts: Parts, who: Seen, thread_id: ThreadId, checkpoint: Checkpoint
) -> Response:
    """The thread's state at one checkpoint."""
    principal = who.acting("read")
    with _threads(parts, principal) as hot:
        found = hot.get(thread_id, checkpoint, principal)
    values = {name: shown(v) for name, v in found.checkpoint["channel_values"].items()}
    context = {"thread_id": thread_id, "checkpoint": checkpoint, "values": values}
    return render(request, "state.html", context, who=who)


@router.get("/threads/{thread_id}/diff")
def diff(
    request: Request,
    parts: Parts,
    who: Seen,
    thread_id: ThreadId,
    start: Annotated[str, Query(alias="from", min_length=1, max_length=256)],
    end: Annotated[str | None, Query(alias="to", min_length=1, max_length=256)] = None,
) -> Response:
    """What changed between two checkpoints."""
    principal = who.acting("read")
    with _threads(parts, principal) as hot:
        found = hot.diff(thread_id, start, end, principal)
    context = {
        "thread_id": thread_id,
        "diff": found,
        "added": {k: shown(v) for k, v in found.added.items()},
        "removed": {k: shown(v) for k, v in found.removed.items()},
        "changed": [(c.channel, shown(c.before), shown(c.after)) for c in found.changed],
    }
    return render(request, "diff.html", context, who=who)


@router.post("/threads/{thread_id}/fork")
def fork(
    request: Request,
    parts: Parts,
    who: Acting,
    thread_id: ThreadId,
    checkpoint: Annotated[str, Form(min_length=1, max_length=256)],
) -> Response:
    """A new thread from a checkpoint; the source stays as it was."""
    principal = who.acting("write")
    with _threads(parts, principal) as hot:
        made = hot.fork(thread_id, checkpoint, None, principal)
    return back(request, f"/threads/{made.thread_id}")


@router.get("/threads/{thread_id}/prune")
def prune_preview(
    request: Request,
    parts: Parts,
    who: Seen,
    thread_id: ThreadId,
    keep: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    """Which checkpoints a prune keeping the newest ``keep`` would delete."""
    principal = who.acting("read")
    with _threads(parts, principal) as hot:
        history = hot.history(thread_id, principal)
    context = {"thread_id": thread_id, "keep": keep, "kept": history[:keep], "gone": history[keep:]}
    return render(request, "prune.html", context, who=who)


@router.post("/threads/{thread_id}/prune")
def prune(
    request: Request,
    parts: Parts,
    who: Acting,
    thread_id: ThreadId,
    keep: Annotated[int, Form(ge=1, le=1_000_000)],
) -> Response:
    """Delete all but the newest ``keep`` checkpoints."""
    principal = who.acting("write")
    with _threads(parts, principal) as hot:
        hot.prune(thread_id, keep, principal)
    return back(request, f"/threads/{thread_id}")


@router.post("/threads/{thread_id}/approve")
def approve(
    request: Request,
    parts: Parts,
    who: Acting,
    thread_id: ThreadId,
    draft_hash: Annotated[str, Form(min_length=8, max_length=64)],
) -> Response:
    """Publish the paused draft whose hash the page showed (a changed draft is refused)."""
    principal = who.acting("write")
    analyst = analyst_over(parts.served.memory)
    if analyst is None:
        raise NotFoundError(f"no paused run on thread {thread_id!r}")
    done = analyst.approve(principal, thread_id, draft_hash=draft_hash, approver=principal.user_id)
    return render(request, "approved.html", {"status": done}, who=who)
