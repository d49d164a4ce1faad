"""``/v1/review``: writes the poisoning guard held, waiting for a person.

Each entry is one line of the user's review queue (PII already redacted), named by its id
(:meth:`Memory.review_queue`; any unambiguous prefix of 4 or more digits). Discarding
removes it; approving stores the held fact as the write it was, past the guard (a person
has read it) but through the rest of the write policy (:meth:`Memory.approve_held`).
"""

from __future__ import annotations

from fastapi import APIRouter, Path

from engram.memory import HeldWrite
from engram.server import _models as m
from engram.server._deps import Layer, Reader, Writer

router = APIRouter(prefix="/v1/review", tags=["review"])
EntryId = Path(min_length=4, max_length=64, pattern="^[0-9a-f]+$")


def _out(held: HeldWrite) -> m.ReviewEntryOut:
    return m.ReviewEntryOut(
        id=held.id,
        entry=held.line,
        held_at=held.held_at,
        reason=held.reason,
        kind=held.kind,
        text=held.text,
        slot=held.slot,
        key=held.key,
        path=held.path,
    )


@router.get("")
def list_review(who: Reader, layer: Layer) -> list[m.ReviewEntryOut]:
    """The user's held writes, oldest first."""
    return [_out(held) for held in layer.memory.review_queue(who)]


@router.post("/{entry}/discard")
def discard(who: Writer, layer: Layer, entry: str = EntryId) -> m.ReviewEntryOut:
    """Drop a held write for good."""
    return _out(layer.memory.discard_held(who, entry))


@router.post("/{entry}/approve")
def approve(who: Writer, layer: Layer, entry: str = EntryId) -> m.RememberOut:
    """Store a held fact as the write it was: a person vouched for it."""
    return m.RememberOut.of(layer.memory.approve_held(who, entry))
