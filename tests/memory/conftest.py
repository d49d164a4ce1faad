"""Fixtures of the memory-layer tests: an embedded Memory on real files, with a settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram.memory import Memory
from engram.recall import HashEmbedder


@dataclass
class Clock:
    """A clock the test moves forward by hand."""

    now: datetime = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / ".engram"


@pytest.fixture
def memory(home: Path, clock: Clock) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder(), clock=clock) as opened:
        yield opened
