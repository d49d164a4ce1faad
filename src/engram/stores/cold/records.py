"""Records of the cold tier: what a long-term memory is, and what operations return.

Times are timezone-aware UTC datetimes in the API; backends store them as epoch
seconds (floats) so every engine compares them the same way (which is why a stored
moment ends a second before ``datetime.max``: see ``_validate.LAST_MOMENT``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, Literal, get_args

from engram.errors import InvalidInputError

Source = Literal["user", "tool", "policy", "agent"]
"""Who asserted a fact: the user, a tool result, the write policy itself, or the agent."""

Sensitivity = Literal["low", "normal", "high"]
"""How sensitive a fact is; the write policy decides what each level may do."""

Namespace = tuple[str, ...]
"""A hierarchical scope, e.g. ``(tenant_id, user_id)`` or ``(tenant_id, user_id, "notes")``."""

SOURCES: tuple[str, ...] = get_args(Source)
SENSITIVITIES: tuple[str, ...] = get_args(Sensitivity)
NAMESPACE_SEPARATOR = "\x1f"
"""Joins namespace labels in storage; labels may not contain it (nor NUL)."""


def utc(moment: datetime) -> datetime:
    """Return ``moment`` as an aware UTC datetime (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # ("9999-12-31T23:59-12:00" is past the last UTC datetime)
        raise InvalidInputError(
            f"{moment.isoformat()} is outside the datetimes UTC can hold"
        ) from None


def to_epoch(moment: datetime | None) -> float | None:
    """Epoch seconds of ``moment`` (``None`` stays ``None``)."""
    return None if moment is None else utc(moment).timestamp()


_LAST = datetime.max.replace(tzinfo=UTC)
_LAST_EPOCH = _LAST.timestamp()
"""``datetime.max`` in epoch seconds, rounded (as a float) to the first second of year 10000."""


def from_epoch(seconds: float | None) -> datetime | None:
    """Aware UTC datetime of epoch ``seconds`` (``None`` stays ``None``). Seconds at or
    past :data:`_LAST_EPOCH` read as ``datetime.max``: a store written before moments were
    bounded (``_validate.LAST_MOMENT``) may hold ``datetime.max``, rounded up to there."""
    if seconds is None:
        return None
    return _LAST if seconds >= _LAST_EPOCH else datetime.fromtimestamp(seconds, UTC)


def validate_namespace(namespace: Namespace, *, allow_empty: bool = False) -> Namespace:
    """Return ``namespace`` as a tuple if every label is a safe non-empty string."""
    ns = tuple(namespace)
    if not ns and not allow_empty:
        raise InvalidInputError("a namespace needs at least one label")
    for label in ns:
        if not isinstance(label, str) or not label:
            raise InvalidInputError(f"namespace labels must be non-empty strings: {ns!r}")
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in label):  # NUL, the separator...
            raise InvalidInputError(f"namespace label contains a control character: {label!r}")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(f"namespace label is not valid Unicode: {label!r}") from None
    return ns


def join_namespace(namespace: Namespace) -> str:
    """The storage form of ``namespace`` (labels joined by :data:`NAMESPACE_SEPARATOR`)."""
    return NAMESPACE_SEPARATOR.join(namespace)


def split_namespace(stored: str) -> Namespace:
    """Inverse of :func:`join_namespace`."""
    return tuple(stored.split(NAMESPACE_SEPARATOR)) if stored else ()


def in_prefix(namespace: Namespace, prefix: Namespace) -> bool:
    """Whether ``namespace`` lies under ``prefix`` label by label (never by string)."""
    return namespace[: len(prefix)] == prefix


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact came from: the thread, checkpoint and messages that produced it, and
    the user's words it was read from (``quote``, when it was extracted from them)."""

    thread_id: str | None = None
    checkpoint_id: str | None = None
    message_ids: tuple[str, ...] = ()
    quote: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "thread_id": self.thread_id,
            "checkpoint_id": self.checkpoint_id,
            "message_ids": list(self.message_ids),
        }
        if self.quote is not None:
            out["quote"] = self.quote
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Provenance:
        data = data or {}
        return cls(
            thread_id=data.get("thread_id"),
            checkpoint_id=data.get("checkpoint_id"),
            quote=data.get("quote"),
            message_ids=tuple(data.get("message_ids") or ()),
        )


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One version of one long-term fact.

    ``(namespace, key)`` names a fact; each write of it is a new version with its
    own ``id``. The current version has ``superseded_by is None``; older ones keep
    ``valid_to`` and ``superseded_by`` and stay in history until erased.
    """

    id: str
    namespace: Namespace
    key: str
    value: Mapping[str, Any]
    text: str
    recorded_at: datetime
    created_at: datetime
    valid_from: datetime
    tags: tuple[str, ...] = ()
    source: Source = "user"
    sensitivity: Sensitivity = "normal"
    importance: float = 0.5
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    ttl_seconds: float | None = None
    provenance: Provenance = field(default_factory=Provenance)
    superseded_by: str | None = None
    embedding_model: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise InvalidInputError(f"source must be one of {SOURCES}, got {self.source!r}")
        if self.sensitivity not in SENSITIVITIES:
            raise InvalidInputError(
                f"sensitivity must be one of {SENSITIVITIES}, got {self.sensitivity!r}"
            )
        if not (0.0 <= self.importance <= 1.0) or math.isnan(self.importance):
            raise InvalidInputError(f"importance must be in [0, 1], got {self.importance!r}")
        if not isinstance(self.key, str) or not self.key:
            raise InvalidInputError("a memory key must be a non-empty string")
        object.__setattr__(self, "value", MappingProxyType(dict(self.value)))

    def is_live(self, now: datetime) -> bool:
        """Current, valid at ``now`` and not expired."""
        return self.superseded_by is None and self.valid_at(now) and not self.expired(now)

    def valid_at(self, moment: datetime) -> bool:
        """Whether the fact held at ``moment`` (and had been recorded by then)."""
        if self.recorded_at > moment or self.valid_from > moment:
            return False
        return self.valid_to is None or self.valid_to > moment

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True, slots=True)
class View:
    """Which versions a read sees.

    By default only live versions (current, valid now, not expired). ``as_of``
    asks for what was valid at that time, superseded versions included.
    """

    now: datetime
    as_of: datetime | None = None
    include_expired: bool = False
    include_superseded: bool = False

    def __post_init__(self) -> None:
        """Both moments as aware UTC (naive ones read as UTC), so every backend compares
        them alike: with stored times in Python, or as epoch seconds in SQL."""
        object.__setattr__(self, "now", utc(self.now))
        if self.as_of is not None:
            object.__setattr__(self, "as_of", utc(self.as_of))

    def admits(self, record: MemoryRecord) -> bool:
        """Python form of the view; backends compile the same rules to SQL."""
        if not self.include_expired and record.expired(self.now):
            return False
        if self.as_of is not None:
            return record.valid_at(self.as_of)
        if self.include_superseded:
            return True
        return record.superseded_by is None and record.valid_at(self.now)


@dataclass(frozen=True, slots=True)
class NewFact:
    """One fact for :meth:`LongTermStore.remember_many`: the arguments of
    :meth:`LongTermStore.remember` as a record (the same names and defaults).

    ``valid_to`` ends the stored version's validity at that moment (a fact known to
    have stopped being true: an import of a closed version)."""

    text: str
    key: str | None = None
    slot: str | None = None
    value: Mapping[str, Any] | None = None
    tags: Sequence[str] = ()
    source: Source = "user"
    sensitivity: Sensitivity = "normal"
    importance: float = 0.5
    ttl: timedelta | None = None
    expires_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    provenance: Provenance | None = None


WriteAction = Literal["added", "updated", "deleted", "noop", "rejected", "held"]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write did: ``action``, the record it produced or touched, and why."""

    action: WriteAction
    record: MemoryRecord | None = None
    reason: str | None = None
    previous: MemoryRecord | None = None
    redactions: tuple[str, ...] = ()
    evicted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Recalled:
    """A record returned by recall with its score and the signals behind it
    (``similarity``: the query's cosine with it, None when it was no vector candidate)."""

    record: MemoryRecord
    score: float
    relevance: float
    recency: float
    importance: float
    similarity: float | None = None
    keyword_rank: int | None = None
    """1-based rank among the keyword candidates (None: not one)."""
    vector_rank: int | None = None
    """1-based rank among the vector candidates (None: not one)."""


@dataclass(frozen=True, slots=True)
class EraseCounts:
    """How many things a backend removed: distinct item keys, versions (rows), vectors and
    keyword entries (counts, not the keys themselves)."""

    keys: int = 0
    versions: int = 0
    vectors: int = 0
    keyword_entries: int = 0


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """The receipt of an erasure: how much was removed and whether storage was compacted."""

    namespace_prefix: Namespace
    keys: int
    """How many distinct (namespace, key) items were erased, every version included."""
    versions: int
    """How many versions (rows, history included) were deleted."""
    vectors: int
    """How many stored vectors were deleted."""
    keyword_entries: int
    """How many keyword-index entries were deleted."""
    caches_cleared: int
    """How many in-process caches (vector matrices, stemmed keyword counts) were emptied,
    whatever they held (0 when nothing was erased: there was nothing to drop)."""
    compacted: bool
    """Whether the backend compacted its storage so the bytes are unrecoverable."""
