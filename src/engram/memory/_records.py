"""Records of the memory layer and the pure logic behind recall: ranking, packing, rendering.

Nothing here does I/O. :class:`engram.memory.Memory` gathers candidates from the
tiers, then :func:`pack` keeps the most valuable ones that fit the token budget and
renders them as untrusted data with :func:`engram.policy.render_block`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from engram.policy import UNTRUSTED_PREAMBLE, RenderItem, render_block
from engram.stores.cold import (
    ForgetReport,
    MemoryRecord,
    Recalled,
    Sensitivity,
    Source,
    WriteResult,
)
from engram.stores.documents import SearchHit
from engram.tokens import TokenCounter, count_tokens

ItemKind = Literal["profile", "memory", "document"]

KIND_PRIORITY: Mapping[ItemKind, int] = {"profile": 0, "memory": 1, "document": 2}
"""Profile facts come first, then recalled memories, then document passages."""

PROFILE_TAGS: tuple[str, ...] = ("profile", "preference", "constraint")
"""Tags of facts recalled by exact lookup on every call (the user's standing profile)."""

RemembersAs = Literal["added", "updated", "ignored", "held", "rejected", "deleted"]


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """The signals behind a recalled memory's score (what :class:`Recalled` carries)."""

    relevance: float
    recency: float
    importance: float
    similarity: float | None = None
    keyword_rank: int | None = None
    vector_rank: int | None = None

    @classmethod
    def of(cls, found: Recalled) -> ScoreBreakdown:
        return cls(
            found.relevance,
            found.recency,
            found.importance,
            found.similarity,
            found.keyword_rank,
            found.vector_rank,
        )


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One entry of a context block: a fact or passage, its score and where it came from."""

    kind: ItemKind
    text: str
    score: float
    source: str
    key: str | None = None
    thread_id: str | None = None
    checkpoint_id: str | None = None
    message_ids: tuple[str, ...] = ()
    recorded_at: str | None = None
    tokens: int = 0
    breakdown: ScoreBreakdown | None = None
    """How a recalled memory's score was made (``None`` for profile facts and passages)."""

    def attrs(self) -> tuple[tuple[str, str], ...]:
        """The block attributes: kind, score and provenance (only those known)."""
        pairs = [("kind", self.kind), ("score", f"{self.score:.3f}"), ("source", self.source)]
        optional = {
            "key": self.key,
            "thread_id": self.thread_id,
            "checkpoint_id": self.checkpoint_id,
            "message_ids": ",".join(self.message_ids) or None,
            "recorded_at": self.recorded_at,
        }
        pairs += [(name, value) for name, value in optional.items() if value]
        return tuple(pairs)

    def render(self) -> str:
        return render_block(RenderItem(self.text, self.attrs()))


@dataclass(frozen=True, slots=True)
class RecallResult:
    """A context block for the next model call: its items, rendered text and token use."""

    items: tuple[ContextItem, ...]
    text: str
    tokens_used: int
    budget_tokens: int
    dropped: int = 0

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class RememberResult:
    """What :meth:`Memory.remember` did: ``action``, ``reason`` and the stored key."""

    action: RemembersAs
    reason: str | None
    key: str | None = None
    text: str | None = None
    previous_text: str | None = None
    redactions: tuple[str, ...] = ()

    @property
    def stored(self) -> bool:
        return self.action in ("added", "updated")


@dataclass(frozen=True, slots=True)
class Observation:
    """One fact for :meth:`Memory.remember_many`: the arguments of
    :meth:`Memory.remember` as a record (the same names and defaults)."""

    text: str
    slot: str | None = None
    tags: Sequence[str] = ("fact",)
    source: Source = "user"
    sensitivity: Sensitivity = "normal"
    importance: float = 0.5
    ttl: timedelta | None = None
    thread_id: str | None = None
    checkpoint_id: str | None = None
    message_ids: Sequence[str] = ()
    quote: str | None = None
    key: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """The receipt of :meth:`Memory.forget`: what went from every tier."""

    tenant_id: str
    user_id: str
    facts: ForgetReport
    documents: tuple[str, ...]
    threads: tuple[str, ...]
    hot_compacted: bool
    documents_compacted: bool
    participants: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """What each erasure participant removed (e.g. ``{"outbox": {"publications": 2}}``)."""

    def to_json(self) -> dict[str, Any]:
        facts = self.facts
        return {
            "tenant_id": self.tenant_id,
            "user_id": self.user_id,
            "facts": {
                "keys": facts.keys,
                "versions": facts.versions,
                "vectors": facts.vectors,
                "keyword_entries": facts.keyword_entries,
                "caches_cleared": facts.caches_cleared,
                "compacted": facts.compacted,
            },
            "documents": list(self.documents),
            "threads": list(self.threads),
            "hot_compacted": self.hot_compacted,
            "documents_compacted": self.documents_compacted,
            "participants": {name: dict(counts) for name, counts in self.participants.items()},
        }


@dataclass(frozen=True, slots=True)
class BranchReport:
    """Facts written from checkpoints outside a thread's kept lineage (a discarded branch)."""

    thread_id: str
    kept_checkpoints: tuple[str, ...]
    facts: tuple[MemoryRecord, ...] = field(default_factory=tuple)
    removed: int = 0


# --- pure helpers --------------------------------------------------------------------


def to_remembered(result: WriteResult) -> RememberResult:
    """The layer's account of a cold-tier write (``noop`` reads as ``ignored``)."""
    action: RemembersAs = "ignored" if result.action == "noop" else result.action
    record, previous = result.record, result.previous
    return RememberResult(
        action,
        result.reason,
        record.key if record else (previous.key if previous else None),
        record.text if record else None,
        previous.text if previous else None,
        result.redactions,
    )


def _stamp(record: MemoryRecord) -> str:
    return record.recorded_at.isoformat(timespec="seconds")


def fact_item(
    kind: ItemKind, record: MemoryRecord, score: float, breakdown: ScoreBreakdown | None = None
) -> ContextItem:
    """A context item for a long-term fact, with its provenance."""
    prov = record.provenance
    return ContextItem(
        kind,
        record.text,
        score,
        record.source,
        record.key,
        prov.thread_id,
        prov.checkpoint_id,
        prov.message_ids,
        _stamp(record),
        breakdown=breakdown,
    )


def profile_items(records: Iterable[MemoryRecord]) -> list[ContextItem]:
    """Profile facts (exact lookups) score 1.0: they always lead the block."""
    return [fact_item("profile", r, 1.0) for r in records]


def memory_items(found: Iterable[Recalled], skip: set[str]) -> list[ContextItem]:
    """Recalled memories not already in the profile, with their recall score."""
    return [
        fact_item("memory", r.record, r.score, ScoreBreakdown.of(r))
        for r in found
        if r.record.key not in skip
    ]


def document_items(hits: Iterable[SearchHit]) -> list[ContextItem]:
    """Document passages; the source names the file, heading and lines."""
    return [
        ContextItem(
            "document",
            hit.text,
            hit.score,
            f"{hit.path}#L{hit.line_start}-L{hit.line_end}",
            key=hit.path,
        )
        for hit in hits
    ]


def rank(items: Iterable[ContextItem]) -> list[ContextItem]:
    """Highest value first: by kind (profile, memory, document), then score."""
    return sorted(items, key=lambda i: (KIND_PRIORITY[i.kind], -i.score))


def pack(
    items: Sequence[ContextItem], budget_tokens: int, counter: TokenCounter | None = None
) -> RecallResult:
    """Keep the ranked items that fit ``budget_tokens`` (preamble included) and render them."""
    ranked = rank(items)
    used = count_tokens(UNTRUSTED_PREAMBLE, counter) + 1
    kept: list[ContextItem] = []
    for item in ranked:
        block = item.render()
        cost = count_tokens(block, counter) + 1
        if used + cost > budget_tokens:
            continue
        used += cost
        kept.append(_with_tokens(item, cost))
    if not kept:
        return RecallResult((), "", 0, budget_tokens, len(ranked))
    text = "\n".join([UNTRUSTED_PREAMBLE, *(i.render() for i in kept)])
    return RecallResult(tuple(kept), text, used, budget_tokens, len(ranked) - len(kept))


def _with_tokens(item: ContextItem, tokens: int) -> ContextItem:
    return replace(item, tokens=tokens)


def record_json(record: MemoryRecord) -> dict[str, Any]:
    """A long-term fact version as JSON (for export)."""

    def iso(moment: Any) -> str | None:
        return None if moment is None else moment.isoformat()

    return {
        "id": record.id,
        "namespace": list(record.namespace),
        "key": record.key,
        "text": record.text,
        "value": dict(record.value),
        "tags": list(record.tags),
        "source": record.source,
        "sensitivity": record.sensitivity,
        "importance": record.importance,
        "recorded_at": iso(record.recorded_at),
        "valid_from": iso(record.valid_from),
        "valid_to": iso(record.valid_to),
        "expires_at": iso(record.expires_at),
        "superseded_by": record.superseded_by,
        "provenance": record.provenance.to_json(),
    }
