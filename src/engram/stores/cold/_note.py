"""A fact on its way into the cold store: what ``remember`` was given, after the policy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from engram.stores.cold.records import Namespace, Provenance, Sensitivity, Source


@dataclass(frozen=True, slots=True)
class Note:
    """A fact on its way into the store (after the caller, before the backend)."""

    namespace: Namespace
    text: str
    slot: str | None
    extra: dict[str, Any]
    tags: tuple[str, ...]
    source: Source
    sensitivity: Sensitivity
    importance: float
    ttl: timedelta | None
    expires_at: datetime | None
    valid_from: datetime | None
    provenance: Provenance
    redactions: tuple[str, ...] = ()
    slot_inferred: bool = False
    valid_to: datetime | None = None
    """When the stored version stops being valid (``None``: until superseded)."""

    def value(self) -> dict[str, Any]:
        value = {**self.extra, "text": self.text}
        if self.slot:
            value["slot"] = self.slot
        return value

    def fields(self) -> dict[str, Any]:
        return {
            "tags": self.tags,
            "source": self.source,
            "sensitivity": self.sensitivity,
            "importance": self.importance,
            "valid_from": self.valid_from,
            "provenance": self.provenance,
        }
