"""engram's cold tier as an evaluated method, through its public API only.

Each haystack becomes the memory of one user (``Principal("eval", <haystack id>)``)
in a :class:`~engram.stores.cold.LongTermStore`; turns are bulk-loaded with
``put_many`` (keys are turn ids, values carry speaker, session and date) and
questions go through ``recall``. The store lives in a temporary SQLite file (the
embedded default) unless a URL is given.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

from engram._principal import Principal
from engram.eval._context import line
from engram.eval._data import Question, Turn
from engram.eval._methods import Method
from engram.recall import CONVERSATION, ContextBoost, Embedder, parse_date
from engram.stores.cold import LongTermStore, Options, Recalled, TurnRule, open_store

TEMPORARY_URLS = {
    "sqlite": "sqlite:///{folder}/memory.db",
    "qdrant": "qdrant+local:///{folder}/qdrant",
    "qdrant-edge": "qdrant+edge:///{folder}/qdrant-edge",
    "memory": "memory://",
}
"""The cold-tier backends an evaluation can run on, each in a temporary folder."""

DEFAULT = "engram recall (default)"
"""The main row: ``LongTermStore.recall`` exactly as a user calls it."""

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
"""When a question is asked that gives no date of its own (LoCoMo's)."""
WRITTEN = datetime(2000, 1, 1, tzinfo=UTC)
"""When every turn is written: before any question, so each sees them all, and all of
the same age, so recency ranks none above another and every run is the same."""


class EngramColdMethod(Method):
    """engram's recall over raw turns, with its defaults unless ``recall_options`` say
    (and ``turn_context``, the write-time option of contextual vectors: off)."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        url: str | None = None,
        name: str = DEFAULT,
        options: Options | None = None,
        recall_options: dict[str, Any] | None = None,
        backend: str = "sqlite",
        turn_context: int = 0,
        turn_context_rule: TurnRule = "always",
    ) -> None:
        self.name = name
        self._turn_context = turn_context
        self._turn_context_rule = turn_context_rule
        self._embedder = embedder
        self._url = url
        self._backend = TEMPORARY_URLS[backend]
        self._options = options
        self._recall_options = recall_options or {}
        self._stack = ExitStack()
        self._store: LongTermStore | None = None
        self._now = WRITTEN

    def _open(self) -> LongTermStore:
        if self._store is None:
            url = self._url
            if url is None:
                folder = Path(
                    self._stack.enter_context(tempfile.TemporaryDirectory(prefix="engram-eval-"))
                )
                url = self._backend.format(folder=folder)
            self._store = self._stack.enter_context(
                open_store(
                    url,
                    embedder=self._embedder,
                    options=self._options,
                    clock=lambda: self._now,
                    new_id=sequential_ids(),
                )
            )
        return self._store

    def index(self, user: str, turns: Sequence[Turn]) -> None:
        store = self._open()
        self._now = WRITTEN
        namespace = _principal(user).namespace
        items = [(namespace, t.id, _value(t, i)) for i, t in enumerate(turns)]
        store.put_many(
            items, turn_context=self._turn_context, turn_context_rule=self._turn_context_rule
        )

    def search(self, user: str, question: Question, k: int) -> list[str]:
        self._now = asked_at(question)
        return [hit.record.key for hit in self._recall(user, question, k)]

    def _recall(self, user: str, question: Question, k: int) -> list[Recalled]:
        return self._open().recall(_principal(user), question.text, k=k, **self._recall_options)

    def close(self) -> None:
        self._store = None
        self._stack.close()


def asked_at(question: Question) -> datetime:
    """The end of the day ``question`` was asked (LongMemEval gives it: "10 days ago" is
    dated from it), or :data:`EPOCH` when it gives none."""
    day = parse_date(question.date) if question.date else None
    return EPOCH if day is None else datetime.combine(day, time(23, 59), tzinfo=UTC)


def sequential_ids() -> Callable[[], str]:
    """Version ids in insertion order, so recall's tie-breaks are the same on every run."""
    counter = itertools.count(1)
    return lambda: f"{next(counter):016x}"


def _principal(user: str) -> Principal:
    return Principal("eval", user.replace("/", "_"))


def _value(turn: Turn, position: int) -> dict[str, Any]:
    return {
        "text": line(turn),
        "speaker": turn.speaker,
        "session": turn.session,
        "date": turn.date,
        "position": position,
    }


def turn_context_name(turns: int, rule: TurnRule = "always") -> str:
    """The row of the default recall over turns embedded with ``turns`` turns before them
    (an ablation, off the line-up unless asked: see docs/eval/results.md)."""
    ruled = "" if rule == "always" else f", turn_context_rule={rule}"
    return f"default, turns embedded with {turns} before them (turn_context={turns}{ruled})"


HYBRID = "engram hybrid, no re-ranking (context=None)"
CONTEXT = "default + session/neighbour context (CONVERSATION)"
NO_DIALOGUE_ROW = "default without the dialogue steps (NO_DIALOGUE)"


class EngramContextMethod(EngramColdMethod):
    """engram's recall with another re-ranking than the default (a ``ContextBoost``).

    ``LongTermStore.recall(..., context=ContextBoost(...))`` re-ranks the fused
    candidates using only what is stored with each turn (text, session, position,
    speaker, date): stemmed keywords, then speaker, date, neighbour and session boosts.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        boost: ContextBoost = CONVERSATION,
        name: str = CONTEXT,
        backend: str = "sqlite",
    ) -> None:
        super().__init__(embedder, name=name, backend=backend)
        self._boost = boost

    def _recall(self, user: str, question: Question, k: int) -> list[Recalled]:
        return self._open().recall(_principal(user), question.text, k=k, context=self._boost)


def hybrid_method(embedder: Embedder, backend: str = "sqlite") -> EngramColdMethod:
    """Plain hybrid recall: rank fusion of the keyword and vector candidates, no re-ranking."""
    return EngramColdMethod(
        embedder, name=HYBRID, recall_options={"context": None}, backend=backend
    )
