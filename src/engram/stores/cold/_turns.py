"""Conversation turns embedded with the turns before them (opt-in, at write time).

A turn of a chat log ("Yes, last Tuesday!") says little on its own. With
``turn_context=n``, :meth:`LongTermStore.put_many` and
:meth:`LongTermStore.remember_many` embed each turn -- a fact whose value names a
``session`` -- from its own text followed by the texts of the ``n`` turns before it in
the same session of the same call and namespace (oldest first, call order). Only the vector changes:
the stored text, the keyword index and everything recall returns stay the turn's own,
and the context texts are not stored with it (they are stored only as the turns they
are). Facts without a ``session`` are embedded from their own text, as before.

``turn_context_rule`` says which turns get the context:

- ``"always"``: every turn with earlier turns is embedded with them;
- ``"shorter"``: only a turn with fewer words than its context turns have on average
  (a reply shorter than what it follows leans on it; a turn as long as its neighbours
  says what it is about itself, and the context would only dilute it).

Measured in ``docs/eval/results.md`` (contextual embeddings): it lifts LoCoMo's chat
logs of short turns and costs LongMemEval's long user turns, so it stays off by default.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping
from typing import Any, Literal, get_args

from engram import _validate as check

SESSION_FIELD = "session"
"""The value field naming a turn's session (as ``ContextBoost.session_field``)."""

TurnRule = Literal["always", "shorter"]
"""Which turns get the context (see the module's docstring)."""


class TurnWindow:
    """The text to embed for each turn of one write call, turns given in order."""

    def __init__(self, before: int, rule: TurnRule = "always", field: str = SESSION_FIELD) -> None:
        self._before = check.integer("turn_context", before, minimum=0, maximum=16)
        self._rule = check.choice("turn_context_rule", rule, get_args(TurnRule))
        self._field = field
        self._recent: dict[tuple[Hashable, Hashable], deque[str]] = {}

    def embedded(self, text: str, value: Mapping[str, Any] | None, namespace: Hashable = ()) -> str:
        """``text`` followed by the earlier turns of its session in ``namespace`` (``text``
        alone when it is empty, names no session, the window is 0 or the rule gives it
        no context); then ``text`` joins the window. Sessions of two namespaces never
        share a window."""
        session = _session(value, self._field)
        if not (text and self._before and session is not None):
            return text
        recent = self._recent.setdefault((namespace, session), deque(maxlen=self._before))
        context = list(recent)
        recent.append(text)
        if self._rule == "shorter" and not _shorter(text, context):
            return text
        return "\n".join([text, *context])


def _shorter(text: str, context: list[str]) -> bool:
    """Whether ``text`` has fewer words than the ``context`` turns have on average."""
    return len(text.split()) * len(context) < sum(len(turn.split()) for turn in context)


def _session(value: Mapping[str, Any] | None, field: str) -> Hashable | None:
    """The session a value names: a text or an integer (anything else names none)."""
    session = None if value is None else value.get(field)
    if isinstance(session, bool) or not isinstance(session, str | int):
        return None
    return session
