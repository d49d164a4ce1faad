"""Adapters playing lifecycle scenarios on engram's public API.

:class:`ColdTarget` drives :class:`~engram.stores.cold.LongTermStore` (remember /
recall / forget / get) with a simulated clock set by each step.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engram._principal import Principal
from engram.eval._engram import sequential_ids
from engram.recall import Embedder
from engram.stores.cold import LongTermStore, open_store


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class ColdTarget:
    """A fresh long-term store (temporary SQLite file unless ``url`` is given)."""

    def __init__(self, embedder: Embedder, url: str | None = None, min_score: float = 0.0) -> None:
        self._clock = _Clock()
        self._stack = ExitStack()
        self._min_score = min_score
        if url is None:
            folder = Path(
                self._stack.enter_context(tempfile.TemporaryDirectory(prefix="engram-life-"))
            )
            url = f"sqlite:///{folder / 'memory.db'}"
        self._store: LongTermStore = self._stack.enter_context(
            open_store(url, embedder=embedder, clock=self._clock, new_id=sequential_ids())
        )

    def remember(
        self, who: Principal, key: str | None, text: str, ttl: float | None, now: datetime
    ) -> str:
        self._clock.now = now
        life = None if ttl is None else timedelta(seconds=ttl)
        return self._store.remember(who, text, key=key, ttl=life).action

    def recall(
        self, who: Principal, query: str, k: int, now: datetime, min_score: float | None
    ) -> list[str]:
        self._clock.now = now
        floor = self._min_score if min_score is None else min_score
        hits = self._store.recall(who, query, k=k, min_score=floor)
        return [hit.record.text for hit in hits]

    def forget(self, who: Principal, key: str | None, now: datetime) -> int:
        self._clock.now = now
        report = self._store.forget(who, None if key is None else [key])
        return int(report.keys) if isinstance(report.keys, int) else len(report.keys)

    def get(self, who: Principal, key: str, now: datetime) -> str | None:
        self._clock.now = now
        item = self._store.get(who.namespace, key)
        return None if item is None else str(item.value.get("text", ""))

    def close(self) -> None:
        self._stack.close()


class MemoryTarget:
    """The memory layer (:class:`engram.Memory`, every tier embedded in a temporary home).

    A scenario ``key`` is the fact's ``slot`` (the memory layer names facts by what they
    are about); ``recall`` returns the texts of the context block ``Memory.recall`` builds.
    """

    def __init__(self, embedder: Embedder, budget_tokens: int = 2000) -> None:
        from engram.memory import Memory

        self._clock = _Clock()
        self._stack = ExitStack()
        self._budget = budget_tokens
        home = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="engram-life-")))
        self._memory = Memory.open(home=home, embedder=embedder, clock=self._clock)
        self._stack.callback(self._memory.close)

    def remember(
        self, who: Principal, key: str | None, text: str, ttl: float | None, now: datetime
    ) -> str:
        self._clock.now = now
        life = None if ttl is None else timedelta(seconds=ttl)
        return str(self._memory.remember(who, text, slot=key, ttl=life).action)

    def recall(
        self, who: Principal, query: str, k: int, now: datetime, min_score: float | None
    ) -> list[str]:
        self._clock.now = now
        block = self._memory.recall(who, query, self._budget, k=k)
        floor = 0.0 if min_score is None else min_score
        return [item.text for item in block.items if item.score >= floor]

    def forget(self, who: Principal, key: str | None, now: datetime) -> int:
        self._clock.now = now
        if key is None:
            return int(self._memory.forget(who).facts.keys)
        keys = sorted({r.key for r in self._memory.facts(who) if r.value.get("slot") == key})
        return int(self._memory.forget(who, keys).facts.keys) if keys else 0

    def get(self, who: Principal, key: str, now: datetime) -> str | None:
        self._clock.now = now
        current = self._memory.facts(who, include_history=False)
        return next((r.text for r in current if r.value.get("slot") == key), None)

    def close(self) -> None:
        self._stack.close()
