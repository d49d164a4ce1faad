"""Conversation turns embedded with the turns before them (opt-in, at write time).

A turn of a chat log ("Yes, last Tuesday!") says little on its own. With
``turn_context=n``, :meth:`LongTermStore.put_many` and
:meth:`LongTermStore.remember_many` embed each turn -- a fact whose value names a
``session`` -- from its own text followed by the texts of the ``n`` turns before it in
the same session of the same call and namespace (oldest first, call order). Only the vector changes:
the stored text, the keyword index and everything recall returns stay the turn's own,
and the context texts are not stored with it (they are stored only as the turns they
are). Facts without a ``session`` are embedded from their own text, as before.

``rule`` says how the context reaches a turn's vector:

- ``"always"``: every turn with earlier turns is embedded with them;
- ``"shorter"``: only a turn with fewer words than its context turns have on average
  (a reply shorter than what it follows leans on it; a turn as long as its neighbours
  says what it is about itself, and the context would only dilute it);
- ``"blend"``: the turn's vector is the normalised sum of its own unit vector and that
  of its text with the context, so the turn keeps at least half its own direction
  however long the context (a second embedding per turn with context).

Measured in ``docs/eval/results.md`` (contextual embeddings): it lifts LoCoMo's chat
logs of short turns and costs LongMemEval's long user turns, so it stays off by default.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np

from engram import _validate as check
from engram.recall import Embedder
from engram.stores.cold.contract import Vector

SESSION_FIELD = "session"
"""The value field naming a turn's session (as ``ContextBoost.session_field``)."""

TurnRule = Literal["always", "shorter", "blend"]
"""How the context reaches a turn's vector (see the module's docstring)."""


class TurnWindow:
    """The texts to embed for each turn of one write call, turns given in order."""

    def __init__(self, before: int, rule: TurnRule = "always", field: str = SESSION_FIELD) -> None:
        self._before = check.integer("turn_context", before, minimum=0, maximum=16)
        self._rule = check.choice("turn_context_rule", rule, get_args(TurnRule))
        self._field = field
        self._recent: dict[tuple[Hashable, Hashable], deque[str]] = {}

    def embedded(
        self, text: str, value: Mapping[str, Any] | None, namespace: Hashable = ()
    ) -> tuple[str, ...]:
        """The texts whose vectors make the turn's (see :func:`embed_turns`): ``text``
        alone when it is empty, names no session, has no earlier turn in its session of
        ``namespace`` or the rule gives it none; else ``text`` followed by those turns
        (``"blend"``: ``text`` too). Then ``text`` joins its session's window."""
        session = _session(value, self._field)
        if not (text and self._before and session is not None):
            return (text,)
        recent = self._recent.setdefault((namespace, session), deque(maxlen=self._before))
        out = self._with(text, list(recent))
        recent.append(text)
        return out

    def _with(self, text: str, context: list[str]) -> tuple[str, ...]:
        if not context or (self._rule == "shorter" and not _shorter(text, context)):
            return (text,)
        joined = "\n".join([text, *context])
        return (text, joined) if self._rule == "blend" else (joined,)


def embed_turns(
    embedder: Embedder | None, groups: Sequence[tuple[str, ...]]
) -> list[Vector | None]:
    """A vector for each group of texts in one embedding call: its one text's vector, or
    the normalised sum of its texts' unit vectors; ``None`` for an empty group."""
    flat = [text for group in groups for text in group]
    if embedder is None or not flat:
        return [None] * len(groups)
    found = iter(embedder.embed(flat))
    return [_summed([next(found) for _ in group]) if group else None for group in groups]


def _summed(vectors: list[Vector]) -> Vector:
    if len(vectors) == 1:
        return vectors[0]
    total = np.sum([v / (np.linalg.norm(v) or 1.0) for v in vectors], axis=0)
    return np.asarray(total / (np.linalg.norm(total) or 1.0), dtype=np.float32)


def _shorter(text: str, context: list[str]) -> bool:
    """Whether ``text`` has fewer words than the ``context`` turns have on average."""
    return len(text.split()) * len(context) < sum(len(turn.split()) for turn in context)


def _session(value: Mapping[str, Any] | None, field: str) -> Hashable | None:
    """The session a value names: a text or an integer (anything else names none)."""
    session = None if value is None else value.get(field)
    if isinstance(session, bool) or not isinstance(session, str | int):
        return None
    return session
