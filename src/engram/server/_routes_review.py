"""``/v1/review``: writes the poisoning guard held, waiting for a person.

Each entry is one line of the user's review document (PII already redacted); its id is
the digest of that line. Discarding removes the line; approving removes it and stores
its text as a fact, past the guard (a person has read it) but through the rest of the
write policy.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import cast

from fastapi import APIRouter, Path

from engram._principal import Principal
from engram.errors import NotFoundError
from engram.memory import Memory
from engram.server import _models as m
from engram.server._deps import Layer, Reader, Writer
from engram.stores.cold import LongTermStore
from engram.stores.documents.markdown import render, split_front_matter
from engram.stores.documents.review import review_path

router = APIRouter(prefix="/v1/review", tags=["review"])
EntryId = Path(min_length=16, max_length=16, pattern="^[0-9a-f]{16}$")


def entry_id(entry: str) -> str:
    """The id of a review entry: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(entry.encode("utf-8")).hexdigest()[:16]


@router.get("")
def list_review(who: Reader, layer: Layer) -> list[m.ReviewEntryOut]:
    """The user's held writes, oldest first."""
    entries = layer.memory.held_for_review(who)
    return [m.ReviewEntryOut(id=entry_id(e), entry=e) for e in entries]


def _take(memory: Memory, who: Principal, wanted: str) -> str:
    """Remove the entry ``wanted`` from the queue (atomically); its line."""
    taken: list[str] = []

    def remove(text: str | None) -> str:
        taken.clear()
        if text is None:
            raise NotFoundError(f"no review entry {wanted!r}")
        meta, body, _ = split_front_matter(text)
        kept = []
        for line in body.splitlines():
            if not taken and line.startswith("- ") and entry_id(line[2:]) == wanted:
                taken.append(line[2:])
            else:
                kept.append(line)
        if not taken:
            raise NotFoundError(f"no review entry {wanted!r}")
        return render("\n".join(kept) + "\n", meta)

    if not memory.documents.exists(who, review_path(who)):
        raise NotFoundError(f"no review entry {wanted!r}")
    memory.documents.update_text(who, review_path(who), remove)
    return taken[0]


@router.post("/{entry}/discard")
def discard(who: Writer, layer: Layer, entry: str = EntryId) -> m.ReviewEntryOut:
    """Drop a held write for good."""
    return m.ReviewEntryOut(id=entry, entry=_take(layer.memory, who, entry))


@router.post("/{entry}/approve")
def approve(who: Writer, layer: Layer, entry: str = EntryId) -> m.RememberOut:
    """Store a held write's text as a fact: a person vouched for it."""
    memory = layer.memory
    line = _take(memory, who, entry)
    text = line.split(" | ", 3)[-1]
    policy = dataclasses.replace(memory.policy, hold_instructions=False)
    store = LongTermStore(
        memory.store.backend, embedder=memory.embedder, policy=policy, clock=memory.clock
    )
    result = store.remember(who, text, tags=("fact", "reviewed"))
    return m.RememberOut(
        action=_action(result.action),
        reason=result.reason,
        key=result.record.key if result.record else None,
        text=result.record.text if result.record else None,
        previous_text=result.previous.text if result.previous else None,
        redactions=list(result.redactions),
    )


def _action(action: str) -> m.Action:
    return cast(m.Action, "ignored" if action == "noop" else action)
