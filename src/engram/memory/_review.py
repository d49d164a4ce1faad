"""The review queue as the memory layer sees it: held writes with ids, approved into
long-term facts or discarded by a person.

A queue line (:func:`engram.stores.documents.review.entry_line`) reads
``<time> | <reason> | origin <JSON> | <text>``; the origin of a held fact is
``{"thread": ..., "checkpoint": ..., "slot": ..., "source": ..., "tags": [...]}`` and, for
a new version of a stored fact, its ``"key"`` (what the write asked for, so approving it
stores the same fact), that of a held document
write ``{"document": <path>}``. Lines queued before the origin was JSON
(``thread <id>, checkpoint <id>, as {...}`` or ``document <path>``) are still read. An
entry's id is a digest of its line: stable while it waits, the same for everyone who
lists the queue.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast, get_args

from engram import _validate as check
from engram.errors import InvalidInputError, NotFoundError
from engram.stores.cold import Provenance, Source
from engram.stores.documents.review import entry_line, entry_parts

HeldKind = Literal["fact", "document"]

_FACT = re.compile(
    r"thread (?P<thread>\S+), checkpoint (?P<checkpoint>\S+)(?:, as (?P<write>\{.*\}))?"
)
_DOCUMENT = re.compile(r"document (?P<path>\S+)")
_ID_CHARS = 12
_EARLIER_WRITE = ("slot", "source", "tags")
"""What the ``as {...}`` of an earlier-form line held."""


@dataclass(frozen=True, slots=True)
class HeldWrite:
    """One write waiting in a user's review queue (its text PII-redacted, never recalled).

    ``kind`` is ``"fact"`` (held by :meth:`Memory.remember`; ``approve_held`` stores it)
    or ``"document"`` (held by a memory-tool command, with its ``path``).
    """

    id: str
    held_at: str
    reason: str
    kind: HeldKind
    text: str
    thread_id: str | None = None
    checkpoint_id: str | None = None
    path: str | None = None
    slot: str | None = None
    source: Source = "user"
    tags: tuple[str, ...] = ("fact",)
    key: str | None = None
    """The stored fact a held new version is of (approving it writes that version)."""
    line: str = field(default="", repr=False)

    @property
    def provenance(self) -> Provenance:
        """Where the held fact came from (thread and checkpoint)."""
        return Provenance(self.thread_id, self.checkpoint_id)

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON-ready data (without its raw queue line)."""
        return {
            "id": self.id,
            "held_at": self.held_at,
            "kind": self.kind,
            "reason": self.reason,
            "text": self.text,
            "thread_id": self.thread_id,
            "checkpoint_id": self.checkpoint_id,
            "path": self.path,
            "slot": self.slot,
            "source": self.source,
            "tags": list(self.tags),
            "key": self.key,
        }


def held_entry(
    when: datetime,
    text: str,
    reason: str,
    provenance: Provenance,
    *,
    slot: str | None = None,
    source: Source = "user",
    tags: Sequence[str] = ("fact",),
    key: str | None = None,
) -> str:
    """One review-queue line for a held fact: time, reason, origin and the (redacted) text."""
    origin: dict[str, Any] = {
        "thread": provenance.thread_id,
        "checkpoint": provenance.checkpoint_id,
        "slot": slot,
        "source": source,
        "tags": list(tags),
    }
    if key is not None:
        origin["key"] = key
    return entry_line(when.isoformat(timespec="seconds"), reason, origin, text)


def entry_id(line: str) -> str:
    """The id of a queue line: the first hex digits of its SHA-256."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:_ID_CHARS]


def parse_entry(line: str) -> HeldWrite:
    """A queue line (without its ``- ``) as a :class:`HeldWrite`."""
    if (found := entry_parts(line)) is not None:
        return _from_origin(line, *found)
    parts = line.split(" | ")
    for at in range(2, len(parts) - 1):
        origin = _FACT.fullmatch(parts[at]) or _DOCUMENT.fullmatch(parts[at])
        if origin is not None:
            reason, text = " | ".join(parts[1:at]), " | ".join(parts[at + 1 :])
            return _held(line, parts[0], reason, text, origin)
    return HeldWrite(entry_id(line), parts[0], " | ".join(parts[1:]), "fact", "", line=line)


def _from_origin(line: str, when: str, reason: str, origin: dict[str, Any], text: str) -> HeldWrite:
    common: dict[str, Any] = {"id": entry_id(line), "held_at": when, "reason": reason}
    if isinstance(path := origin.get("document"), str):
        return HeldWrite(kind="document", text=text, path=path, line=line, **common)
    tags, source = origin.get("tags"), origin.get("source")
    return HeldWrite(
        kind="fact",
        text=text,
        thread_id=_text_or_none(origin.get("thread")),
        checkpoint_id=_text_or_none(origin.get("checkpoint")),
        slot=_text_or_none(origin.get("slot")),
        source=_source(source),
        tags=tuple(tags) if isinstance(tags, list) and all(isinstance(t, str) for t in tags)
        else ("fact",),
        key=_text_or_none(origin.get("key")),
        line=line,
        **common,
    )  # fmt: skip


def _source(value: object) -> Source:
    for known in get_args(Source):
        if value == known:
            return cast(Source, known)
    return "user"


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _held(line: str, when: str, reason: str, text: str, origin: re.Match[str]) -> HeldWrite:
    """A line queued before the origin was JSON, read as its JSON form would be (a value of
    the wrong type in a hand-edited ``as {...}`` falls back as it does there)."""
    if "path" in origin.groupdict():
        return _from_origin(line, when, reason, {"document": origin["path"]}, text)
    try:
        write = json.loads(origin["write"]) if origin["write"] else {}
    except ValueError:
        write = {}
    asked = {k: write[k] for k in _EARLIER_WRITE if k in write} if isinstance(write, dict) else {}
    where = {"thread": _dash(origin["thread"]), "checkpoint": _dash(origin["checkpoint"])}
    return _from_origin(line, when, reason, {**asked, **where}, text)


def _dash(value: str) -> str | None:
    return None if value == "-" else value


def find_held(entries: Sequence[HeldWrite], held_id: str) -> HeldWrite:
    """The entry whose id is ``held_id`` (or starts with it, if that names one entry)."""
    wanted = held_id.strip().lower()
    if len(wanted) < 4:
        raise InvalidInputError(f"a review id has at least 4 hex digits, got {held_id!r}")
    found = [entry for entry in entries if entry.id.startswith(wanted)]
    if not found:
        raise NotFoundError(f"no held write {check.shown(held_id)} in the review queue")
    if len({entry.id for entry in found}) > 1:
        raise InvalidInputError(
            f"review id {check.shown(held_id)} names several entries: give more digits"
        )
    return found[0]
