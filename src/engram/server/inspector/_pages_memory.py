"""Memories as the agent recalls them, facts and their history, the review queue."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Annotated, Literal

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import Response

from engram.errors import InvalidInputError, NotFoundError
from engram.memory import Memory
from engram.server.inspector._web import Acting, Parts, Seen, back, render
from engram.stores.cold import MemoryRecord

router = APIRouter()
Status = Literal["current", "superseded", "expired", "all"]
FactKey = Annotated[str, Path(min_length=1, max_length=256)]
Entry = Annotated[str, Path(min_length=4, max_length=64, pattern="^[0-9a-f]+$")]


def moment(text: str | None) -> datetime | None:
    """A date (``2026-03-02``) or a time (``2026-03-02T09:00``), read as UTC when naive."""
    if text is None or not text.strip():
        return None
    try:
        found = datetime.fromisoformat(text.strip())
    except ValueError:
        try:
            found = datetime.combine(date.fromisoformat(text.strip()), time.max)
        except ValueError as exc:
            raise InvalidInputError(f"as_of: not a date: {text[:40]!r}") from exc
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


@router.get("/memories")
def memories(
    request: Request,
    parts: Parts,
    who: Seen,
    q: Annotated[str, Query(max_length=10_000)] = "",
    budget: Annotated[int, Query(ge=1, le=200_000)] = 1000,
    k: Annotated[int, Query(ge=1, le=100)] = 8,
    as_of: Annotated[str, Query(max_length=40)] = "",
) -> Response:
    """Recall as the agent would: the context block and each item's score breakdown."""
    principal = who.acting("read")
    result = None
    if q.strip():
        memory = parts.served.memory
        result = memory.recall(principal, q, budget, k=k, as_of=moment(as_of))
    form = {"q": q, "budget": budget, "k": k, "as_of": as_of}
    return render(request, "memories.html", {"form": form, "result": result}, who=who)


def status_of(record: MemoryRecord, now: datetime) -> Status:
    """Where a fact version stands now."""
    if record.superseded_by is not None:
        return "superseded"
    return "current" if record.is_live(now) else "expired"


@router.get("/facts")
def facts(
    request: Request,
    parts: Parts,
    who: Seen,
    tag: Annotated[str, Query(max_length=256)] = "",
    source: Annotated[str, Query(max_length=32)] = "",
    status: Status = "current",
) -> Response:
    """The user's facts, filtered by tag, source and standing."""
    memory = parts.served.memory
    now = memory.now()
    rows = [
        (r, status_of(r, now))
        for r in memory.facts(who.acting("read"), include_history=True)
        if (not tag or tag in r.tags) and (not source or r.source == source)
    ]
    rows = [(r, s) for r, s in rows if status in ("all", s)]
    rows.sort(key=lambda pair: (pair[0].key, pair[0].recorded_at))
    form = {"tag": tag, "source": source, "status": status}
    return render(request, "facts.html", {"rows": rows, "form": form}, who=who)


def _versions(memory: Memory, who: Seen, key: str) -> list[MemoryRecord]:
    found = memory.history(who.acting("read"), key)
    if not found:
        raise NotFoundError(f"no fact {key!r}")
    return found


@router.get("/facts/{key}")
def fact(
    request: Request,
    parts: Parts,
    who: Seen,
    key: FactKey,
    as_of: Annotated[str, Query(max_length=40)] = "",
) -> Response:
    """A fact's versions as a timeline; ``as_of`` marks the one that held then."""
    memory = parts.served.memory
    versions = _versions(memory, who, key)
    now, when = memory.now(), moment(as_of)
    by_id = {v.id: v for v in versions}
    held = [v for v in versions if when is not None and v.valid_at(when)]
    current = [v for v in versions if v.is_live(now)]
    context = {
        "key": key,
        "versions": [(v, status_of(v, now), by_id.get(v.superseded_by or "")) for v in versions],
        "as_of": as_of,
        "held_then": held[-1].id if held else None,
        "current": current[-1] if current else None,
        "may_write": who.grant.allows("write"),
        "may_erase": who.grant.allows("erase"),
    }
    return render(request, "fact.html", context, who=who)


@router.post("/facts/{key}/edit")
def edit_fact(
    request: Request,
    parts: Parts,
    who: Acting,
    key: FactKey,
    text: Annotated[str, Form(min_length=1, max_length=100_000)],
) -> Response:
    """A new version of the fact (the old one stays in its history)."""
    principal = who.acting("write")
    memory = parts.served.memory
    now = memory.now()
    live = [v for v in _versions(memory, who, key) if v.is_live(now)]
    if not live:
        raise NotFoundError(f"no current fact {key!r}")
    memory.store.update(principal, key, text, tags=live[-1].tags, importance=live[-1].importance)
    return back(request, f"/facts/{key}")


@router.post("/facts/{key}/retract")
def retract_fact(request: Request, parts: Parts, who: Acting, key: FactKey) -> Response:
    """End the fact's current version now; its history stays."""
    parts.served.memory.store.retract(who.acting("write"), key)
    return back(request, f"/facts/{key}")


@router.post("/facts/{key}/delete")
def delete_fact(request: Request, parts: Parts, who: Acting, key: FactKey) -> Response:
    """Erase the fact, every version of it."""
    report = parts.served.memory.forget(who.acting("erase"), [key])
    if report.facts.keys == 0:
        raise NotFoundError(f"no fact {key!r}")
    return back(request, "/facts")


@router.get("/review")
def review(request: Request, parts: Parts, who: Seen) -> Response:
    """Held writes with the signal that held them."""
    held = parts.served.memory.review_queue(who.acting("read"))
    context = {"held": held, "may_write": who.grant.allows("write")}
    return render(request, "review.html", context, who=who)


@router.post("/review/{entry}/approve")
def approve(request: Request, parts: Parts, who: Acting, entry: Entry) -> Response:
    """Store a held fact: a person read it."""
    result = parts.served.memory.approve_held(who.acting("write"), entry)
    context = {"entry": entry, "outcome": f"approved: {result.action}", "text": result.text}
    return _done(request, who, context)


@router.post("/review/{entry}/discard")
def discard(request: Request, parts: Parts, who: Acting, entry: Entry) -> Response:
    """Drop a held write for good."""
    held = parts.served.memory.discard_held(who.acting("write"), entry)
    return _done(request, who, {"entry": entry, "outcome": "discarded", "text": held.text})


def _done(request: Request, who: Acting, context: Mapping[str, object]) -> Response:
    if request.headers.get("hx-request") == "true":
        return render(request, "review_done.html", context, who=who)
    return back(request, "/review")
