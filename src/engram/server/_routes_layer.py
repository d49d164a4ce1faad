"""``/v1``: the memory layer (remember, recall, forget, export) and facts."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from engram.errors import NotFoundError
from engram.memory import Observation
from engram.server import _models as m
from engram.server._deps import Eraser, Layer, Paging, Reader, Writer, paginate
from engram.server._problems import responses as problems
from engram.server.erasure import erase_user
from engram.stores.cold import MemoryRecord

router = APIRouter(prefix="/v1", tags=["memory"])
facts = APIRouter(prefix="/v1/facts", tags=["facts"])
FactKey = Annotated[str, Path(min_length=1, max_length=m.ID, description="A fact's key.")]


@router.post("/memories", status_code=201, responses=problems(409, 502, 504))
def remember(body: m.RememberIn, who: Writer, layer: Layer) -> m.RememberOut:
    """Remember an observation: write policy, redaction, consolidation, storage."""
    ttl = timedelta(seconds=body.ttl_seconds) if body.ttl_seconds is not None else None
    result = layer.memory.remember(
        who,
        body.observation,
        slot=body.slot,
        tags=body.tags,
        importance=body.importance,
        ttl=ttl,
        thread_id=body.thread_id,
        checkpoint_id=body.checkpoint_id,
        message_ids=body.message_ids,
    )
    return m.RememberOut.of(result)


@router.post("/memories:batch", status_code=201, responses=problems(409, 502, 504))
def remember_many(body: m.RememberManyIn, who: Writer, layer: Layer) -> m.RememberManyOut:
    """Remember many observations, in order, each as ``POST /memories`` would (a later one
    consolidated against the earlier ones), embedded in batches; one result per item."""
    results = layer.memory.remember_many(who, [_observation(item) for item in body.items])
    return m.RememberManyOut(results=[m.RememberOut.of(r) for r in results])


def _observation(body: m.RememberIn) -> Observation:
    ttl = timedelta(seconds=body.ttl_seconds) if body.ttl_seconds is not None else None
    return Observation(
        body.observation,
        slot=body.slot,
        tags=body.tags,
        importance=body.importance,
        ttl=ttl,
        thread_id=body.thread_id,
        checkpoint_id=body.checkpoint_id,
        message_ids=body.message_ids,
    )


@router.post("/recall", responses=problems(502, 504))
def recall(body: m.RecallIn, who: Reader, layer: Layer) -> m.RecallOut:
    """A context block within ``budget_tokens`` (``as_of``: what was true then)."""
    result = layer.memory.recall(
        who,
        body.query,
        body.budget_tokens,
        k=body.k,
        passages=body.passages,
        as_of=body.as_of,
        include_profile=body.include_profile,
        min_score=body.min_score,
    )
    return m.RecallOut.of(result)


@router.post("/forget", responses=problems(409))
def forget(request: Request, body: m.ForgetIn, who: Eraser, layer: Layer) -> m.ErasureOut:
    """Erase the listed facts, or everything about the user from every tier."""
    if body.keys is not None:
        return m.ErasureOut.of(layer.memory.forget(who, body.keys))
    return m.ErasureOut.of(erase_user(layer.memory, layer.audit, who, request.state.key_id))


@router.get("/export")
def export(who: Reader, layer: Layer) -> dict[str, Any]:
    """Everything engram holds about the user."""
    return layer.memory.export(who)


@facts.get("")
def list_facts(
    who: Reader,
    layer: Layer,
    page: Paging,
    include_history: Annotated[bool, Query(description="Superseded, expired too.")] = False,
) -> m.Page[m.FactOut]:
    """The user's facts (current only by default), in a stable order."""
    found = layer.memory.facts(who, include_history=include_history)
    found.sort(key=lambda r: (r.key, r.recorded_at, r.id))
    items, cursor = paginate(found, page)
    return m.Page[m.FactOut](items=[m.FactOut.of(r) for r in items], next_cursor=cursor)


def _history(layer: Layer, who: Reader, key: str) -> list[m.FactOut]:
    found = layer.memory.history(who, key)
    if not found:
        raise NotFoundError(f"no fact {key!r}")
    return [m.FactOut.of(r) for r in found]


def _current(layer: Layer, who: Reader, key: str) -> MemoryRecord:
    now = layer.memory.now()
    current = [r for r in layer.memory.history(who, key) if r.is_live(now)]
    if not current:
        raise NotFoundError(f"no fact {key!r}")
    return current[-1]


@facts.get("/{key}", responses=problems(404))
def get_fact(key: FactKey, who: Reader, layer: Layer) -> m.FactOut:
    """The current version of one fact."""
    return m.FactOut.of(_current(layer, who, key))


@facts.get("/{key}/history", responses=problems(404))
def fact_history(key: FactKey, who: Reader, layer: Layer) -> list[m.FactOut]:
    """Every version of one fact, oldest first."""
    return _history(layer, who, key)


@facts.put("/{key}", responses=problems(404, 409, 502, 504))
def update_fact(key: FactKey, body: m.FactUpdateIn, who: Writer, layer: Layer) -> m.FactWriteOut:
    """Write a new version of an existing fact (the old one stays in its history), as
    ``POST /memories`` writes: a held version joins the review queue, and approving it
    writes it."""
    current = _current(layer, who, key)
    result = layer.memory.remember(
        who,
        body.text,
        key=key,
        tags=current.tags,
        source=current.source,
        sensitivity=current.sensitivity,
        importance=current.importance,
    )
    fact = m.FactOut.of(_current(layer, who, key)) if result.stored else None
    return m.FactWriteOut(action=result.action, reason=result.reason, fact=fact)


@facts.delete("/{key}", responses=problems(404, 409))
def delete_fact(key: FactKey, who: Eraser, layer: Layer) -> m.ErasureOut:
    """Erase one fact, every version of it."""
    report = layer.memory.forget(who, [key])
    if report.facts.keys == 0:
        raise NotFoundError(f"no fact {key!r}")
    return m.ErasureOut.of(report)
