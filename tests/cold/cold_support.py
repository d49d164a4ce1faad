"""Helpers shared by the cold-tier tests (imported by conftest and test modules)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from engram.stores.cold import LongTermStore

StoreFactory = Callable[..., LongTermStore]


class Clock:
    """A test clock: starts at a fixed instant and ticks one microsecond per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
