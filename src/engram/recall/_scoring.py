"""Recall scoring: ``alpha*recency + beta*importance + gamma*relevance``, all in [0, 1]."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from engram.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class Weights:
    """Weights of the three signals (default 0.3 / 0.2 / 0.5) and the recency half-life.

    The score is divided by the sum of the weights, so it stays in [0, 1].
    """

    recency: float = 0.3
    importance: float = 0.2
    relevance: float = 0.5
    half_life_days: float = 30.0

    def __post_init__(self) -> None:
        parts = (self.recency, self.importance, self.relevance)
        if any(w < 0 or math.isnan(w) for w in parts) or sum(parts) <= 0:
            raise InvalidInputError(f"weights must be >= 0 with a positive sum, got {parts}")
        if not self.half_life_days > 0:
            raise InvalidInputError("half_life_days must be positive")


def recency(recorded_at: datetime, now: datetime, half_life_days: float) -> float:
    """Exponential decay in [0, 1]: 1.0 now, 0.5 after one half-life (future clamps to 1)."""
    age_days = max(0.0, (now - recorded_at).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / half_life_days)


def combine(weights: Weights, *, recency: float, importance: float, relevance: float) -> float:
    """The weighted mean of the three signals (each clamped to [0, 1]; NaN as 0.0)."""
    return combiner(weights)(recency, importance, relevance)


def combiner(weights: Weights) -> Callable[[float, float, float], float]:
    """:func:`combine` with ``weights`` bound, called ``(recency, importance, relevance)``
    (recall scores a pool of candidates with one; the clamps are inlined for it)."""
    w_rec, w_imp, w_rel = weights.recency, weights.importance, weights.relevance
    total = w_rec + w_imp + w_rel

    def mean(rec: float, imp: float, rel: float) -> float:
        return (
            w_rec * (1.0 if rec >= 1.0 else rec if rec > 0.0 else 0.0)
            + w_imp * (1.0 if imp >= 1.0 else imp if imp > 0.0 else 0.0)
            + w_rel * (1.0 if rel >= 1.0 else rel if rel > 0.0 else 0.0)
        ) / total

    return mean
