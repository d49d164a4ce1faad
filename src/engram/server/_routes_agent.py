"""``/v1/agent``: the Market Analyst agent (run, status, approve with the draft hash, resume).

Served over the memory's own hot tier, with the publication outbox beside it: the home's
``outbox.db`` (embedded, or a Redis hot tier beside a home), or the ``engram_publications``
table of a PostgreSQL hot tier. A server with neither answers 501 Not Implemented.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, Field

from engram._principal import Principal
from engram.agent import MarketAnalyst, ThreadStatus, analyst_over
from engram.server import _models as m
from engram.server._deps import Layer, Reader, ServerState, Writer
from engram.server._problems import responses as problems

router = APIRouter(prefix="/v1/agent/runs", tags=["agent"])
ThreadId = Path(min_length=1, max_length=128)


class RunIn(m.Body):
    request: str = Field(min_length=1, max_length=10_000)
    thread_id: str | None = Field(default=None, min_length=1, max_length=128)


class ApproveIn(m.Body):
    draft_hash: str = Field(min_length=8, max_length=64, description="The draft you reviewed.")


class StatusOut(BaseModel):
    thread_id: str
    stage: str
    next_nodes: list[str]
    request: str
    tickers: list[str]
    plan: list[str]
    tool_calls: int
    draft: str | None
    draft_hash: str | None
    review: dict[str, Any] | None
    approval: dict[str, Any] | None
    publication: dict[str, Any] | None
    checkpoint_id: str | None
    uses_memory: bool
    memory_pending: bool = Field(
        default=False,
        description="Published, but its brief is not filed nor its facts remembered yet "
        "(a crash came between): resuming or approving again finishes that step.",
    )

    @classmethod
    def of(cls, status: ThreadStatus) -> StatusOut:
        data = dataclasses.asdict(status)
        data.pop("principal")
        return cls.model_validate(m.plain(data))


def _analyst(layer: ServerState) -> MarketAnalyst:
    found = analyst_over(layer.memory)
    if found is None:
        raise HTTPException(501, "the agent needs an embedded home or a PostgreSQL hot tier")
    return found


@router.post("", status_code=201, responses=problems(409, 501, 502, 504))
def run(body: RunIn, who: Writer, layer: Layer) -> StatusOut:
    """Start a thread on ``request``; it stops before publishing, awaiting approval."""
    status = _analyst(layer).run(who, body.request, thread_id=body.thread_id)
    return StatusOut.of(status)


@router.get("/{thread_id}", responses=problems(404, 501))
def status(who: Reader, layer: Layer, thread_id: str = ThreadId) -> StatusOut:
    """Where a thread stands (its draft and draft hash while awaiting approval)."""
    return StatusOut.of(_analyst(layer).status(who, thread_id))


@router.post("/{thread_id}/approve", responses=problems(404, 409, 501, 502, 504))
def approve(body: ApproveIn, who: Writer, layer: Layer, thread_id: str = ThreadId) -> StatusOut:
    """Approve the draft whose hash (or a prefix of 8+) you reviewed, and publish it."""
    analyst = _analyst(layer)
    return StatusOut.of(_approve(analyst, who, thread_id, body.draft_hash))


def _approve(analyst: MarketAnalyst, who: Principal, thread_id: str, digest: str) -> ThreadStatus:
    return analyst.approve(who, thread_id, draft_hash=digest, approver=who.user_id)


@router.post("/{thread_id}/resume", responses=problems(404, 409, 501, 502, 504))
def resume(who: Writer, layer: Layer, thread_id: str = ThreadId) -> StatusOut:
    """Continue an interrupted thread from its last checkpoint (never past an approval)."""
    return StatusOut.of(_analyst(layer).resume(who, thread_id))
