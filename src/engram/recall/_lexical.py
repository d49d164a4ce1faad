"""Stemmed keyword scoring of a candidate set (pure, no I/O).

The backends' keyword search ranks by document frequencies over the whole store and lets
a name that occurs in most memories (the speaker of a conversation, named in every line)
decide ranks. :func:`bm25` re-scores recall's candidates instead: Okapi BM25 over their
texts, words stemmed with the Snowball English stemmer, stop words dropped, inverse
document frequencies taken over the candidates themselves, and the caller may leave out
query words (the speaker names a context re-ranker boosts on its own).

Measured on LoCoMo with MiniLM (docs/eval/results.md): as recall's keyword list this
lifts evidence recall within 2,000 tokens from 0.777 to 0.820 (categories 1-4), and
LongMemEval from 0.921 to 0.929.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from engram.recall._relevance import content_words, stem

K1 = 1.2
"""BM25 term-frequency saturation (the usual value)."""

B = 0.75
"""BM25 length normalisation (the usual value)."""


def terms(text: str) -> list[str]:
    """Stems of ``text``'s content words (stop words dropped), in order."""
    return [stem(w) for w in content_words(text)]


def bm25(query: str, texts: Sequence[str], *, leave_out: Collection[str] = ()) -> list[float]:
    """BM25 score of each of ``texts`` for ``query`` (0.0 when no query term occurs).

    Document frequencies and the mean length come from ``texts``; query words whose stem
    is the stem of a word in ``leave_out`` are ignored.
    """
    wanted, _ = query_stems(query, leave_out)
    return weighted_bm25(dict.fromkeys(wanted, 1.0), texts)


def query_stems(query: str, leave_out: Collection[str]) -> tuple[list[str], set[str]]:
    """``(the query's stems BM25 scores, in order, the stems of the words left out)``."""
    skip = {stem(w.lower()) for w in leave_out}
    return [t for t in dict.fromkeys(terms(query)) if t not in skip], skip


def weighted_bm25(wanted: Mapping[str, float], texts: Sequence[str]) -> list[float]:
    """BM25 of each of ``texts`` for stems weighted by ``wanted`` (a term's weight
    multiplies its contribution)."""
    docs = [_counted(text) for text in texts]
    if not wanted or not docs:
        return [0.0] * len(docs)
    mean = max(sum(len(d.terms) for d in docs) / len(docs), 1e-9)
    idf = idf_of(list(wanted), [d.stems for d in docs])
    weighted = [(t, w, idf[t]) for t, w in wanted.items()]
    keys = wanted.keys()
    return [
        0.0
        if keys.isdisjoint(d.stems)
        else sum(
            [
                w * _term(d.terms.count(t), i, len(d.terms) / mean)
                for t, w, i in weighted
                if t in d.stems
            ],
            0.0,
        )
        for d in docs
    ]


def idf_of(wanted: Sequence[str], docs: Sequence[Collection[str]]) -> dict[str, float]:
    """BM25's inverse document frequency of each stem in ``wanted`` over documents given
    as their stems (:attr:`Terms.stems`)."""
    return {t: _idf(len(docs), len([d for d in docs if t in d])) for t in wanted}


class Terms(NamedTuple):
    """A text's stems in order (:func:`terms`) and the set of them: what BM25 reads of
    a candidate. A term's count is ``terms.count(t)``, taken only for the few query
    stems a text holds (building a ``Counter`` of every stem cost as much again as
    stemming the text)."""

    terms: tuple[str, ...]
    stems: frozenset[str]


def stems_of(text: str) -> Terms:
    """``text``'s :class:`Terms` (cached; the same memories recur across queries)."""
    return _counted(text)


@lru_cache(maxsize=16384)
def _counted(text: str) -> Terms:
    found = tuple(terms(text))
    return Terms(found, frozenset(found))


def clear_caches() -> int:
    """Drop the cached stems and term counts (they hold words of recalled memories);
    returns how many non-empty caches were dropped. Erasure calls this."""
    caches = (stem, _counted)
    dropped = sum(1 for cache in caches if cache.cache_info().currsize)
    for cache in caches:
        cache.cache_clear()
    return dropped


def _idf(n_docs: int, n_with: int) -> float:
    return math.log(1.0 + (n_docs - n_with + 0.5) / (n_with + 0.5))


def _term(tf: int, idf: float, relative_length: float) -> float:
    return idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * relative_length))
