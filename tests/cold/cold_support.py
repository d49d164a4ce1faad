"""Support shared by the cold-tier tests (imported by name: ``tests/cold`` is on the path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """A test clock: starts at a fixed instant and ticks one microsecond per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)
