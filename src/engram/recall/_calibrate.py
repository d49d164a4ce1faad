"""Scores comparable across queries (pure).

Rank fusion and the context re-ranking give relative scores: the best candidate of any
query scores about 1.0, however unrelated it is. :func:`confidence` says instead how
well one candidate answers a query in absolute terms, from two signals that mean the
same thing for every query:

- its cosine with the query, through a logistic curve centred :data:`CENTRE_ABOVE_FLOOR`
  above the relevance floor (``Options.min_similarity``, 0.2 by default: 0.3 maps to 0.5);
- its keyword coverage: the share of the query's inverse-document-frequency mass (stems
  of its content words, frequencies over the candidates) that occurs in its text, so a
  query whose rare words all occur scores near 1 and one that shares only a common word
  scores low.

The two are joined as a noisy-or (either one alone can vouch for a candidate). The cold
store's re-ranked recall gives each item the query's best confidence times its
re-ranked score over the top one, capped by the item's own confidence, and weighs it by
recency and importance (``engram.stores.cold``): the top item scores what the query's
best match is worth, and ``min_score`` means the same for every query
(``DEFAULT_MIN_SCORE``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engram.recall._lexical import Stems, matches, stems_of, terms

COSINE_WIDTH = 0.05
"""Width of the logistic on cosines: 0.1 under its centre maps to 0.12, 0.1 above to 0.88."""

CENTRE_ABOVE_FLOOR = 0.1
"""How far above the relevance floor a cosine is worth 0.5. The floor keeps a question
whose best cosine is below it from recalling anything; but with all-MiniLM-L6-v2 a
personal question nothing answers still scores 0.2-0.4 with personal facts ("What is my
cat's name?" and "My wife's name is Priya"), so cosines just above the floor must not
count as answers. Chosen on LoCoMo conversations 0-4: each question asked of another
conversation's memory, which cannot answer it, and of its own (recall k = 8, min_score
0.4). Centred on the floor (0.2), 894 of 997 questions asked of another memory were
shown a memory and 684 of their own had an answer shown; centred at 0.3, 571 and 673.
Held out, conversations 5-9: 864 -> 512 shown from another memory, 658 -> 640 answers
shown (docs/eval/results.md)."""

DEFAULT_MIN_SCORE = 0.4
"""A score below this is not worth showing: the best item of a query that nothing
answers (cosine under the floor, at most one of its rare words in it) falls under it,
the best item of a query with an answer (cosine well above the floor, or its rare words
present) above. With MiniLM: "What is the capital of the red planet?" over a user's
dog, reports, city and train facts scores 0.31 (its one shared word "red"), "What is
my pet called?" 0.87 for the dog fact (tests/cold/test_calibration.py)."""


def cosine_confidence(similarity: float | None, floor: float) -> float:
    """A cosine mapped to [0, 1]: 0.5 at ``floor + CENTRE_ABOVE_FLOOR`` (0.0 when unknown)."""
    if similarity is None:
        return 0.0
    centre = floor + CENTRE_ABOVE_FLOOR
    return 1.0 / (1.0 + math.exp(-(similarity - centre) / COSINE_WIDTH))


def keyword_coverage(query: str, texts: Sequence[str]) -> list[float]:
    """For each of ``texts``, the share of ``query``'s term weight (IDF over ``texts``) it
    contains; 0.0 for every text when the query has no content word."""
    return coverage(query, [stems_of(text) for text in texts])


def coverage(query: str, docs: Sequence[Stems]) -> list[float]:
    """:func:`keyword_coverage` of texts given as their stems
    (:func:`engram.recall._lexical.stems_of`)."""
    wanted = list(dict.fromkeys(terms(query)))
    held, weights = matches(wanted, docs)
    total = sum(weights.values())
    shares = [0.0] * len(docs)
    if total <= 0:
        return shares
    for n in held:
        shares[n] = sum(weights[t] for t in wanted if f" {t} " in docs[n]) / total
    return shares


def confidence(cosine: float, coverage: float) -> float:
    """Noisy-or of the cosine's confidence and the squared coverage: either alone can
    vouch for a candidate, but one rare word of three (coverage 1/3) adds only 0.11."""
    return 1.0 - (1.0 - cosine) * (1.0 - coverage * coverage)
