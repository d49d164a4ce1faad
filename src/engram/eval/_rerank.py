"""Session- and neighbour-aware re-ranking of engram's recall, from the user's own data only.

Conversation turns are not independent facts: the turn that answers a question is often
next to the one that matches it, and the evidence of a question tends to sit in one or
two sessions. This re-ranker works on the candidates engram's hybrid recall returns
(their fused relevance plus the session, speaker and position stored with each turn):

1. *speaker*: when the question names exactly one speaker of the haystack, that
   speaker's turns get ``speaker`` × their relevance on top;
2. *neighbours*: each turn gains ``neighbours`` × the relevance of the turns right
   before and after it in the same session;
3. *session*: each turn gains ``session`` × the best relevance in its session.

It never reads answers or evidence labels. Weights were chosen on LoCoMo's retrieval
(see docs/eval), so LongMemEval is the held-out check.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """One recalled turn: its id, fused relevance, session, position and speaker."""

    id: str
    relevance: float
    session: str
    position: int
    speaker: str


@dataclass(frozen=True)
class RerankWeights:
    speaker: float = 0.5
    neighbours: float = 0.3
    session: float = 0.5


def named_speaker(question: str, speakers: Sequence[str]) -> str | None:
    """The one speaker named in ``question`` (None when none or several are)."""
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question)]
    return named[0] if len(named) == 1 else None


DEFAULT_WEIGHTS = RerankWeights()


def rerank(
    question: str, candidates: Sequence[Candidate], weights: RerankWeights = DEFAULT_WEIGHTS
) -> list[str]:
    """Candidate ids, best first, after speaker, neighbour and session boosts."""
    speaker = named_speaker(question, sorted({c.speaker for c in candidates}))
    base = {c.id: c.relevance * (1 + weights.speaker * (c.speaker == speaker)) for c in candidates}
    at = {(c.session, c.position): c.id for c in candidates}
    best: dict[str, float] = defaultdict(float)
    for c in candidates:
        best[c.session] = max(best[c.session], base[c.id])
    scores = {}
    for order, c in enumerate(candidates):
        near = sum(base.get(at.get((c.session, c.position + step), ""), 0.0) for step in (-1, 1))
        score = base[c.id] + weights.neighbours * near + weights.session * best[c.session]
        scores[c.id] = (-score, order)
    return sorted(scores, key=scores.__getitem__)
