"""Running an operation again when it lost a race with another writer."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from engram.errors import StaleWriteError

R = TypeVar("R")

ATTEMPTS = 100
"""How often :func:`on_conflict` runs the operation before the conflict is the caller's."""


def on_conflict(work: Callable[[], R], *, attempts: int = ATTEMPTS, pause: float = 0.001) -> R:
    """``work()``; each time it raises :class:`~engram.errors.StaleWriteError` (someone
    else wrote first), again after a random pause that grows with the attempts (up to
    ``64 * pause``), at most ``attempts`` times in all."""
    for attempt in range(1, attempts):
        try:
            return work()
        except StaleWriteError:
            time.sleep(random.uniform(0, pause * 2 ** min(attempt, 6)))
    return work()
