"""Request and response bodies of the REST API (pydantic), separate from storage records."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from engram.memory import ContextItem, ErasureReport, RecallResult, RememberResult
from engram.recall import DEFAULT_MIN_SCORE
from engram.stores.cold import MemoryRecord
from engram.stores.documents import DocumentInfo, SearchHit
from engram.stores.hot import CheckpointInfo, ForkResult, PruneReport, StateDiff, ThreadInfo

T = TypeVar("T")
# The bounds of the arguments the REST routes and the MCP tools share (the same names).
TEXT = 100_000
"""The longest text a request may carry (characters)."""
ID = 256
"""The longest id (a fact's key, slot, tag, thread, checkpoint or message id)."""
PATH = 1024
"""The longest document path."""
TAGS = 32
MESSAGE_IDS = 64
KEYS = 1000
"""The most fact keys one forget names."""
BUDGET = 200_000
"""The largest token budget of a recall."""
TOP_K = 100
"""The most facts a recall considers."""
LINES = 10_000_000
"""The largest line number an insert names."""
Id = Annotated[str, Field(min_length=1, max_length=ID)]


class Body(BaseModel):
    """A request body: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class Page(BaseModel, Generic[T]):
    """One page of a list; ``next_cursor`` fetches the next (``None``: the last page)."""

    items: list[T]
    next_cursor: str | None = None


class Problem(BaseModel):
    """An RFC 9457 problem-details body."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    request_id: str | None = None


# -- the memory layer ----------------------------------------------------------------------


class RememberIn(Body):
    observation: str = Field(min_length=1, max_length=TEXT)
    slot: str | None = Field(default=None, min_length=1, max_length=ID)
    tags: list[Id] = Field(default_factory=lambda: ["fact"], max_length=TAGS)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    ttl_seconds: float | None = Field(default=None, gt=0, le=10 * 365 * 86400)
    thread_id: str | None = Field(default=None, min_length=1, max_length=ID)
    checkpoint_id: str | None = Field(default=None, min_length=1, max_length=ID)
    message_ids: list[Id] = Field(default_factory=list, max_length=MESSAGE_IDS)


class RememberManyIn(Body):
    items: list[RememberIn] = Field(min_length=1, max_length=1000)


Action = Literal["added", "updated", "ignored", "held", "rejected", "deleted"]


class RememberOut(BaseModel):
    action: Action
    reason: str | None
    key: str | None
    text: str | None
    previous_text: str | None
    redactions: list[str]

    @classmethod
    def of(cls, result: RememberResult) -> RememberOut:
        return cls(**{**dataclasses.asdict(result), "redactions": list(result.redactions)})


class RememberManyOut(BaseModel):
    results: list[RememberOut]


class RecallIn(Body):
    query: str = Field(max_length=TEXT)
    budget_tokens: int = Field(default=1000, ge=1, le=BUDGET)
    k: int = Field(default=8, ge=1, le=TOP_K)
    passages: int = Field(default=4, ge=0, le=50)
    as_of: datetime | None = None
    include_profile: bool | None = Field(
        default=None,
        description="true: every profile fact; false: none; null: those the query is about.",
    )
    min_score: float = Field(
        default=DEFAULT_MIN_SCORE,
        ge=0.0,
        le=1.0,
        description="Leave out memories whose calibrated relevance is below this (0: keep all).",
    )


class ContextItemOut(BaseModel):
    kind: Literal["profile", "memory", "document"]
    text: str
    score: float
    source: str
    key: str | None
    thread_id: str | None
    checkpoint_id: str | None
    message_ids: list[str]
    recorded_at: str | None
    tokens: int

    @classmethod
    def of(cls, item: ContextItem) -> ContextItemOut:
        return cls(**{**dataclasses.asdict(item), "message_ids": list(item.message_ids)})


class RecallOut(BaseModel):
    text: str
    items: list[ContextItemOut]
    tokens_used: int
    budget_tokens: int
    dropped: int

    @classmethod
    def of(cls, result: RecallResult) -> RecallOut:
        items = [ContextItemOut.of(item) for item in result.items]
        return cls(
            text=result.text,
            items=items,
            tokens_used=result.tokens_used,
            budget_tokens=result.budget_tokens,
            dropped=result.dropped,
        )


class ForgetIn(Body):
    keys: list[Id] | None = Field(
        default=None, max_length=KEYS, description="Only these facts; omitted: everything."
    )


class FactsErased(BaseModel):
    keys: int
    versions: int
    vectors: int
    keyword_entries: int
    caches_cleared: int
    compacted: bool


class ErasureOut(BaseModel):
    tenant_id: str
    user_id: str
    facts: FactsErased
    documents: list[str]
    threads: list[str]
    hot_compacted: bool
    documents_compacted: bool
    participants: dict[str, dict[str, int]]

    @classmethod
    def of(cls, report: ErasureReport) -> ErasureOut:
        return cls.model_validate(report.to_json())


# -- facts ---------------------------------------------------------------------------------


class ProvenanceOut(BaseModel):
    thread_id: str | None
    checkpoint_id: str | None
    message_ids: list[str]


class FactOut(BaseModel):
    id: str
    key: str
    text: str
    tags: list[str]
    source: str
    sensitivity: str
    importance: float
    recorded_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    expires_at: datetime | None
    superseded_by: str | None
    provenance: ProvenanceOut

    @classmethod
    def of(cls, record: MemoryRecord) -> FactOut:
        return cls(
            id=record.id,
            key=record.key,
            text=record.text,
            tags=list(record.tags),
            source=record.source,
            sensitivity=record.sensitivity,
            importance=record.importance,
            recorded_at=record.recorded_at,
            valid_from=record.valid_from,
            valid_to=record.valid_to,
            expires_at=record.expires_at,
            superseded_by=record.superseded_by,
            provenance=ProvenanceOut(**record.provenance.to_json()),
        )


class FactUpdateIn(Body):
    text: str = Field(min_length=1, max_length=TEXT)


class FactWriteOut(BaseModel):
    action: str
    reason: str | None
    fact: FactOut | None


# -- review queue --------------------------------------------------------------------------


class ReviewEntryOut(BaseModel):
    id: str = Field(description="The entry's digest: what approve and discard name.")
    entry: str = Field(description="The queue line as stored.")
    held_at: str
    reason: str = Field(description="Why it was held, with the signal that fired.")
    kind: Literal["fact", "document"]
    text: str = Field(description="The held text, PII redacted.")
    slot: str | None = None
    key: str | None = Field(default=None, description="The stored fact a held new version is of.")
    path: str | None = Field(default=None, description="A held document write's path.")


# -- documents -----------------------------------------------------------------------------


class DocumentOut(BaseModel):
    path: str
    size: int
    digest: str

    @classmethod
    def of(cls, info: DocumentInfo) -> DocumentOut:
        return cls(path=info.path, size=info.size, digest=info.digest)


class SearchHitOut(BaseModel):
    path: str
    heading: str
    text: str
    line_start: int
    line_end: int
    score: float

    @classmethod
    def of(cls, hit: SearchHit) -> SearchHitOut:
        return cls(**dataclasses.asdict(hit))


class ViewIn(Body):
    path: str = Field(max_length=PATH)
    view_range: list[int] | None = Field(default=None, min_length=2, max_length=2)


class CreateIn(Body):
    path: str = Field(max_length=PATH)
    file_text: str = Field(max_length=TEXT)


class StrReplaceIn(Body):
    path: str = Field(max_length=PATH)
    old_str: str = Field(min_length=1, max_length=TEXT)
    new_str: str = Field(max_length=TEXT)


class InsertIn(Body):
    path: str = Field(max_length=PATH)
    insert_line: int = Field(ge=0, le=LINES)
    insert_text: str = Field(max_length=TEXT)


class DeleteIn(Body):
    path: str = Field(max_length=PATH)


class RenameIn(Body):
    old_path: str = Field(max_length=PATH)
    new_path: str = Field(max_length=PATH)


class ToolOut(BaseModel):
    result: str = Field(description="The memory-tool command's answer, as a model sees it.")


# -- threads -------------------------------------------------------------------------------


class ThreadOut(BaseModel):
    thread_id: str
    checkpoints: int
    last_checkpoint_id: str
    updated_at: datetime | None

    @classmethod
    def of(cls, info: ThreadInfo) -> ThreadOut:
        return cls(
            thread_id=info.thread_id,
            checkpoints=info.checkpoints,
            last_checkpoint_id=info.last_checkpoint_id,
            updated_at=info.updated_at,
        )


class CheckpointOut(BaseModel):
    checkpoint_id: str
    parent_id: str | None
    step: int | None
    source: str | None
    created_at: str
    channels: list[str]
    pending_writes: int

    @classmethod
    def of(cls, info: CheckpointInfo) -> CheckpointOut:
        return cls(**{**dataclasses.asdict(info), "channels": list(info.channels)})


class StateOut(BaseModel):
    thread_id: str
    checkpoint_id: str
    values: dict[str, Any]


class ChangeOut(BaseModel):
    channel: str
    before: Any
    after: Any


class DiffOut(BaseModel):
    from_checkpoint: str
    to_checkpoint: str
    added: dict[str, Any]
    removed: dict[str, Any]
    changed: list[ChangeOut]


class ForkIn(Body):
    checkpoint_id: str = Field(min_length=1, max_length=ID)
    new_thread_id: str | None = Field(default=None, min_length=1, max_length=ID)


class ForkOut(BaseModel):
    source_thread_id: str
    source_checkpoint_id: str
    thread_id: str
    checkpoint_id: str

    @classmethod
    def of(cls, result: ForkResult) -> ForkOut:
        return cls(**dataclasses.asdict(result))


class PruneIn(Body):
    keep_last: int = Field(ge=1, le=1_000_000)


class PruneOut(BaseModel):
    thread_id: str
    kept: int
    deleted_checkpoints: int
    deleted_writes: int
    deleted_blobs: int

    @classmethod
    def of(cls, report: PruneReport) -> PruneOut:
        return cls(**dataclasses.asdict(report))


def plain(values: Any) -> Any:
    """``values`` as plain JSON data (messages and other objects become text)."""
    return json.loads(json.dumps(values, default=str))


def diff_out(diff: StateDiff, plain: Any) -> DiffOut:
    """A state diff with every value made plain JSON by ``plain``."""
    changed = [
        ChangeOut(channel=c.channel, before=plain(c.before), after=plain(c.after))
        for c in diff.changed
    ]
    return DiffOut(
        from_checkpoint=diff.from_checkpoint,
        to_checkpoint=diff.to_checkpoint,
        added=plain(dict(diff.added)),
        removed=plain(dict(diff.removed)),
        changed=changed,
    )


class Health(BaseModel):
    status: Literal["ok"]
