"""Pseudo-relevance feedback for the keyword leg of the re-ranking (pure, no I/O).

A question that needs two turns ("where did the friend Melanie met at the lake move
to?") matches the first turn by its words, but the second shares words with the first
turn, not with the question. :func:`expansion` takes the best few first-pass candidates,
picks their most distinctive stems that the query lacks (term frequency in those texts
times the inverse document frequency over all candidates, so words common in the whole
memory count for little), and returns them with weights below the query's own (1.0):
a second BM25 pass with them finds the turns that continue the first hits' topic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from engram.recall._lexical import counts, idf_of, length_of, stems_of, terms

_NAME = re.compile(r"(?<![.!?:\n]\s)(?<![.!?:\n])(?<!^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b")
"""A capitalised word that does not start the text or a sentence: a name."""


def entities(text: str) -> set[str]:
    """Stems of the capitalised words inside ``text``'s sentences (names, places)."""
    return {t for w in _NAME.findall(text) for t in terms(w)}


def expansion(
    wanted: Collection[str],
    texts: Sequence[str],
    top: Sequence[int],
    size: int,
    weight: float,
    names_only: bool = False,
) -> dict[str, float]:
    """Up to ``size`` stems of ``texts[i]`` for ``i`` in ``top`` (the first pass's best,
    best first) that are not in ``wanted``, each weighted ``weight`` x its share of the
    best stem's feedback score (so the best gets ``weight``); empty when nothing qualifies.

    A stem must occur in at least two of the top texts when more than one is given (one
    text's idiosyncratic words are noise, words the best hits share are their topic).
    With ``names_only``, only stems of capitalised words inside the top texts' sentences
    qualify (entity-linked expansion: other turns about the same person or place).
    """
    if weight <= 0 or size <= 0 or not top:
        return {}
    docs = [stems_of(text) for text in texts]
    picked = [docs[i] for i in top]
    seen: Counter[str] = Counter(t for d in picked for t in counts(d))
    needed = 2 if len(picked) > 1 else 1
    pool = [t for t, n in seen.items() if n >= needed and t not in wanted]
    if names_only:
        names = {t for i in top for t in entities(texts[i])}
        pool = [t for t in pool if t in names]
    if not pool:
        return {}
    idf = idf_of(pool, docs)
    score = {t: idf[t] * sum(counts(d)[t] / max(length_of(d), 1) for d in picked) for t in pool}
    best = sorted(pool, key=lambda t: (-score[t], t))[:size]
    top_score = score[best[0]] or 1.0
    return {t: weight * score[t] / top_score for t in best if score[t] > 0}
