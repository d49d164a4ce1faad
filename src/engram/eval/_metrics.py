"""Pure retrieval metrics over ranked ids (no I/O, no model)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def dedupe(ids: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id, in order."""
    return list(dict.fromkeys(ids))


def recall(found: Iterable[str], evidence: Sequence[str]) -> float:
    """Fraction of ``evidence`` present in ``found`` (1.0 when there is no evidence)."""
    wanted = set(evidence)
    if not wanted:
        return 1.0
    return len(wanted.intersection(found)) / len(wanted)


def recall_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Fractional evidence recall of the top ``k``."""
    return recall(ranked[:k], evidence)


def all_found_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """1.0 when every evidence id is in the top ``k``."""
    return 1.0 if set(evidence) <= set(ranked[:k]) else 0.0


def any_found_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """1.0 when at least one evidence id is in the top ``k``."""
    return 1.0 if set(evidence) & set(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Binary-relevance nDCG of the top ``k`` (duplicates in ``ranked`` count once)."""
    wanted = set(evidence)
    if not wanted:
        return 1.0
    top = dedupe(ranked)[:k]
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(top) if item in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean (0.0 of nothing), rounded to 4 places for stable reports."""
    items = list(values)
    return round(sum(items) / len(items), 4) if items else 0.0
