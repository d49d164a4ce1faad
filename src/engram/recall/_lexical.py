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

A candidate's stems are one string (:data:`Stems`), which a backend may store with each
version (:func:`stored_stems`; SQLite does) so that recall reads them instead of stemming
its pool again; only the texts holding a query stem are scored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

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
    return scored(wanted, [_counted(text) for text in texts])


def scored(wanted: Mapping[str, float], docs: Sequence[Stems]) -> list[float]:
    """:func:`weighted_bm25` of documents given as their stems (:func:`stems_of`)."""
    scores = [0.0] * len(docs)
    if not wanted or not docs:
        return scores
    lengths = [length_of(d) for d in docs]
    mean = max(sum(lengths) / len(docs), 1e-9)
    held, idf = matches(list(wanted), docs)
    weighted = [(f" {t} ", w, idf[t]) for t, w in wanted.items()]
    for n in held:
        doc = docs[n]
        length = lengths[n] / mean
        scores[n] = sum(
            [w * _term(doc.count(m), i, length) for m, w, i in weighted if m in doc], 0.0
        )
    return scores


def matches(wanted: Sequence[str], docs: Sequence[Stems]) -> tuple[list[int], dict[str, float]]:
    """The positions of the documents (given as their stems) holding a stem of
    ``wanted`` (usually a few of recall's candidates, the only ones a query's terms
    score), and :func:`idf_of` each stem over all ``docs``, counted among those alone."""
    marks = [f" {t} " for t in wanted]
    held = [n for n, d in enumerate(docs) if any(m in d for m in marks)]
    return held, idf_of(wanted, [docs[n] for n in held], len(docs))


def idf_of(
    wanted: Sequence[str], docs: Sequence[Stems], count: int | None = None
) -> dict[str, float]:
    """BM25's inverse document frequency of each stem in ``wanted`` over documents given
    as their stems: ``docs``, or ``count`` documents of which ``docs`` are those holding
    any of ``wanted``."""
    total = len(docs) if count is None else count
    return {t: _idf(total, len([d for d in docs if f" {t} " in d])) for t in wanted}


Stems = str
"""A text's stems in order (:func:`terms`), each between two spaces: ``" camp  lake "``
(a stem holds no space). One string, searched by ``str`` methods, with no object per
stem: a stem ``t`` occurs ``stems.count(f" {t} ")`` times, and the text has
:func:`length_of` stems."""


def length_of(stems: Stems) -> int:
    """How many stems ``stems`` holds."""
    return stems.count(" ") // 2


def counts(stems: Stems) -> Counter[str]:
    """How often each stem of ``stems`` occurs."""
    return Counter(stems.split())


def stems_of(text: str) -> Stems:
    """``text``'s :data:`Stems` (cached; the same memories recur across queries)."""
    return _counted(text)


@lru_cache(maxsize=16384)
def _counted(text: str) -> Stems:
    return stored_stems(text)


def stored_stems(text: str) -> Stems:
    """The :data:`Stems` of ``text``, as a backend stores them (:attr:`Excerpt.stems`):
    read with the excerpt, a candidate's stems are not computed again (~5 µs a text,
    most of the re-ranking of a large store's candidates)."""
    found = terms(text)
    return f" {'  '.join(found)} " if found else ""


def stems_for(text: str, stored: Stems | None) -> Stems:
    """The :data:`Stems` of ``text``: ``stored`` (read back from a backend) when given,
    else taken from the text."""
    return stems_of(text) if stored is None else stored


def clear_caches() -> int:
    """Drop the cached stems (they hold words of recalled memories);
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
