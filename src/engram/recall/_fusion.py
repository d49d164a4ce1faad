"""Rank fusion: combine separately retrieved candidate lists (keyword, vector...)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60
"""The usual reciprocal-rank-fusion constant (Cormack et al., 2009)."""


def rrf(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> dict[K, float]:
    """Reciprocal rank fusion, normalised to [0, 1].

    Each list contributes ``1 / (k + rank)`` (rank from 1) to its items. The sum is
    divided by the best achievable sum over the non-empty lists, so an item ranked
    first by every retriever scores 1.0 and one found by one of two retrievers at
    most 0.5. Returns an empty dict when every list is empty.
    """
    lists = [r for r in rankings if r]
    if not lists:
        return {}
    fused: dict[K, float] = {}
    for ranking in lists:
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    best = len(lists) / (k + 1)
    return {item: score / best for item, score in fused.items()}
