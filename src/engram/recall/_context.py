"""Context-aware re-ranking of recalled conversation turns (pure, no I/O).

Turns are not independent facts: the turn that answers a question is often next to the
one that matches it, and the evidence for a question tends to sit in one or two
sessions. :func:`rerank` works on recall's candidates only (their fused relevance and
the session, position and speaker stored in each value):

1. *speaker*: when the query names exactly one speaker among the candidates, that
   speaker's turns get ``speaker`` x their relevance on top;
2. *neighbours*: each turn gains ``neighbours`` x the relevance of the turns right
   before and after it in the same session;
3. *session*: each turn gains ``session`` x the best relevance in its session.

Measured on LoCoMo (docs/eval/results.md): evidence recall within 2,000 tokens 0.771 ->
0.827. On LongMemEval's long user turns it does not help, so it is opt-in.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """One recalled turn: its id, fused relevance, session, position and speaker."""

    id: str
    relevance: float
    session: str
    position: int
    speaker: str


@dataclass(frozen=True, slots=True)
class ContextBoost:
    """Weights of the three boosts, the value fields they read, and the candidate pool.

    ``pool`` is how many fused candidates are re-ranked (at least the ``k`` asked for).
    """

    speaker: float = 0.5
    neighbours: float = 0.3
    session: float = 0.5
    session_field: str = "session"
    position_field: str = "position"
    speaker_field: str = "speaker"
    pool: int = 50


def named_speaker(query: str, speakers: Sequence[str]) -> str | None:
    """The one speaker named in ``query`` (None when none or several are)."""
    named = [s for s in speakers if s and re.search(rf"\b{re.escape(s)}\b", query)]
    return named[0] if len(named) == 1 else None


def rerank(
    query: str, candidates: Sequence[Candidate], boost: ContextBoost
) -> list[tuple[str, float]]:
    """``(id, boosted score)`` of the candidates, best first (ties keep the given order)."""
    speaker = named_speaker(query, sorted({c.speaker for c in candidates}))
    base = {c.id: c.relevance * (1 + boost.speaker * (c.speaker == speaker)) for c in candidates}
    at = {(c.session, c.position): c.id for c in candidates}
    best: dict[str, float] = defaultdict(float)
    for c in candidates:
        best[c.session] = max(best[c.session], base[c.id])
    scored = []
    for order, c in enumerate(candidates):
        steps = (-1, 1) if c.position >= 0 else ()
        near = sum(base.get(at.get((c.session, c.position + step), ""), 0.0) for step in steps)
        score = base[c.id] + boost.neighbours * near + boost.session * best[c.session]
        scored.append((-score, order, c.id))
    scored.sort()
    return [(cid, -neg) for neg, _, cid in scored]
