"""The one token counter every method's context is measured with.

tiktoken cannot fetch its encodings offline, so budgets are counted with engram's own
offline estimate of OpenAI's cl100k tokens, :class:`engram.tokens.ApproxCounter`
(cl100k's pre-tokenisation pattern with a per-piece cost; measured against real
cl100k on LoCoMo + LongMemEval texts: median error 4.3 %, totals +2 %; see
``bench/tokens_bench.py``). It is pinned (not the ``auto`` choice) so a run gives
the same numbers on every machine, whether or not a tiktoken file is cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Protocol

from engram.tokens import get_counter


class TokenCounter(Protocol):
    """Counts tokens of texts; the same instance measures every method."""

    @property
    def name(self) -> str: ...

    def count(self, texts: Sequence[str]) -> list[int]: ...


class EngramCounter:
    """Batch adapter over one of :mod:`engram.tokens`' counters (default ``approx``)."""

    def __init__(self, choice: str = "approx") -> None:
        self._counter = get_counter(choice)

    @property
    def name(self) -> str:
        return f"engram.tokens {self._counter.name}"

    def count(self, texts: Sequence[str]) -> list[int]:
        return [self._counter.count(text) for text in texts]


@cache
def default_counter() -> EngramCounter:
    """The process-wide counter."""
    return EngramCounter()
