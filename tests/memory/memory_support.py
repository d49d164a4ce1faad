"""Shared names of the memory-layer tests (principals, a settable clock)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from engram import Principal

ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")
CAROL = Principal("acme", "carol")


@dataclass
class Clock:
    """A clock the test moves forward by hand."""

    now: datetime = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now
