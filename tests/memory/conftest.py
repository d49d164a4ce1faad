"""Fixtures of the memory-layer tests: an embedded Memory on real files, with a settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from memory_support import Clock

from engram.memory import Memory
from engram.recall import HashEmbedder


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
