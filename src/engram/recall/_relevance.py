"""Query terms and relevance of recall candidates (pure).

- :func:`words` / :func:`index_words`: the one tokenisation every backend's keyword
  search uses, in any script: a word is a run of letters, combining marks (Devanagari
  and Arabic vowel signs belong to their word), digits and connectors. Text in scripts
  written without spaces (Han, Hiragana, Katakana, Hangul runs) is cut into
  overlapping character pairs, so "绿茶" finds "我喜欢喝绿茶"; indexed text also keeps
  each character, so a one-character query word ("茶") matches too.
- :func:`keyword_terms`: a query's words without English stop words (all of them when the
  query holds nothing else).
- :func:`index_terms` / :func:`search_terms`: the same words Snowball-stemmed, which the
  SQLite, PostgreSQL and in-process keyword indexes hold and match ("camped" finds
  "camping"; Qdrant's sparse vectors keep the words as written).
- :func:`relevance`: rank fusion of the keyword and vector lists, blended with the raw
  cosine similarities normalised within the candidate set, so candidates that rank
  fusion ties (a name matching every fact) are still told apart.
- :func:`is_relevant`: the absolute floor: a query is answerable when its best vector
  match reaches ``min_similarity`` or one of its content words matches a candidate;
  :func:`is_relevant_item` asks the same of one candidate.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import regex
import snowballstemmer

from engram.recall._fusion import rrf

_WORD = regex.compile(r"[\p{L}\p{M}\p{N}\p{Pc}]+")
_ASCII_WORD = re.compile(r"[a-z0-9_]+")
"""What :data:`_WORD` matches in lower-cased ASCII text (letters, digits, ``_``): the
standard library's engine finds it several times faster."""
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc]+")
"""Runs of scripts written without spaces between words (cut into character pairs)."""

STOP_WORDS = frozenset(
    """a about all am an and any are as at be because been being both but by can could did do
    does doing each for from had has have having he her here hers herself him himself his
    how i if in into is it its itself just me my myself now of on only or our ours ourselves
    she should so some such than that the their theirs them themselves then there these they
    this those to too very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t d ll m re ve""".split()  # noqa: SIM905
)
"""A small English stop-word list: NLTK's, minus words that carry meaning in memories
(time and order: "before", "after", "until"...; negation: "not", "no"; quantity:
"more", "few"...). Dropping those too cost 0.002-0.005 LoCoMo recall."""

DEFAULT_MIN_SIMILARITY = 0.2
"""Default floor on the best cosine similarity. With all-MiniLM-L6-v2, unrelated
question/fact pairs score about -0.03 to 0.08 and related ones 0.3 and more."""

COSINE_SHARE = 0.15
"""Share of the normalised raw cosine in the relevance (the rest is rank fusion): enough
to break rank-fusion ties. On LoCoMo (MiniLM, recall within 2,000 tokens, categories 1-4)
shares 0 / 0.1 / 0.15 / 0.25 / 0.5 gave 0.772 / 0.773 / 0.773 / 0.776 / 0.754, with
recall@5 falling as the share grows (0.447 / 0.445 / 0.445 / 0.441 / 0.429)."""


def _tokens(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def _pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def _split(token: str, keep_characters: bool) -> list[str]:
    """``token`` with its unspaced runs cut into pairs (and characters, when kept)."""
    out: list[str] = []
    last = 0
    for run in _UNSPACED.finditer(token):
        out += [part for part in (token[last : run.start()],) if part]
        chars = list(run.group()) if keep_characters and len(run.group()) > 1 else []
        out += chars + _pairs(run.group())
        last = run.end()
    out += [part for part in (token[last:],) if part]
    return out


def words(text: str) -> list[str]:
    """Lower-cased (NFKC) word tokens of a query; unspaced runs as character pairs."""
    if text.isascii():  # NFKC leaves ASCII alone, and it holds no unspaced run
        return _ASCII_WORD.findall(text.lower())
    normal = unicodedata.normalize("NFKC", text).lower()
    if _UNSPACED.search(normal) is None:  # no run to cut: every token is a word
        return _WORD.findall(normal)
    return [w for token in _WORD.findall(normal) for w in _split(token, keep_characters=False)]


def index_words(text: str) -> list[str]:
    """The tokens a backend indexes for ``text``: :func:`words`, plus each character of
    an unspaced run (so one-character query words match)."""
    return [w for token in _tokens(text) for w in _split(token, keep_characters=True)]


def content_words(text: str) -> list[str]:
    """``text``'s words that are not stop words (a livelihood as "job": :func:`_idioms`)."""
    found = words(text)
    if "living" in found:
        found = _idioms(found)
    return [w for w in found if w not in STOP_WORDS]


def _idioms(found: list[str]) -> list[str]:
    """``found`` with "living" in "for a living" as "job": the stem of "living" is
    "live", so "What do I do for a living?" would match "My sister lives in Toronto"."""
    return [
        "job" if w == "living" and found[max(i - 2, 0) : i] == ["for", "a"] else w
        for i, w in enumerate(found)
    ]


MAX_QUERY_CHARS = 100_000
"""How much of a query a keyword search reads: its first 100,000 characters (the most the
REST API accepts); what follows is not searched for."""

MAX_SEARCH_TERMS = 32
"""How many distinct terms a keyword search sends to an index at most (a query of tens of
thousands of words once exhausted PostgreSQL's stack in ``to_tsquery``)."""


def keyword_terms(text: str) -> list[str]:
    """The words a keyword search matches: the content words, or every word when the
    query is only stop words (so "who is it" still searches); of the first
    :data:`MAX_QUERY_CHARS` characters."""
    text = text[:MAX_QUERY_CHARS]
    return content_words(text) or words(text)


def first_terms(terms: Iterable[str], limit: int = MAX_SEARCH_TERMS) -> list[str]:
    """The first ``limit`` distinct ``terms`` (case-blind; the first spelling kept), stop
    words after the rest: what an index that takes the words as written is sent, by the
    rule of :func:`keyword_terms` (stop words only when nothing else is left)."""
    distinct: dict[str, str] = {}
    for term in terms:
        distinct.setdefault(term.lower(), term)
    ranked = sorted(distinct.items(), key=lambda pair: pair[0] in STOP_WORDS)  # (stable)
    return [term for _, term in ranked[:limit]]


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-cased ``word`` (words of other scripts, digits
    and character pairs come back as they are)."""
    return str(_stemmer().stemWord(word))


def index_terms(text: str) -> list[str]:
    """The stems of :func:`index_words`: what a stemmed keyword index holds for ``text``."""
    return [stem(w) for w in index_words(text)]


def search_terms(query: str) -> list[str]:
    """The stems of :func:`keyword_terms`: what a stemmed keyword index is searched for.

    Measured (MiniLM, plain hybrid recall, within 500 / 1,000 / 2,000 / 4,000 tokens),
    against the words as written: LoCoMo 0-4 0.587 / 0.697 / 0.804 / 0.872 ->
    0.597 / 0.719 / 0.827 / 0.887, held-out 5-9 0.518 / 0.636 / 0.748 / 0.841 ->
    0.537 / 0.666 / 0.786 / 0.870, LongMemEval 0.804 / 0.892 / 0.921 / 0.951 ->
    0.821 / 0.899 / 0.929 / 0.958 (docs/eval/results.md)."""
    return [stem(w) for w in keyword_terms(query)]


def keyword_text(text: str) -> str:
    """:func:`index_terms` joined by spaces: what the SQL backends' full-text indexes
    tokenise (their own tokenisers then only split on the spaces)."""
    return " ".join(index_terms(text))


def relevance(
    keyword: Sequence[str],
    vector: Sequence[tuple[str, float]],
    cosine_share: float = COSINE_SHARE,
) -> dict[str, float]:
    """Relevance in [0, 1] of every candidate: ``(1 - cosine_share) * rrf`` plus
    ``cosine_share`` times its cosine min-max normalised over the vector candidates
    (0 for a keyword-only candidate; 1 for every vector candidate if all cosines tie)."""
    fused = rrf([list(keyword), [i for i, _ in vector]])
    cosines = _normalised(vector)
    return {
        i: (1.0 - cosine_share) * score + cosine_share * cosines.get(i, 0.0)
        for i, score in fused.items()
    }


def is_relevant(
    query: str,
    keyword: Sequence[str],
    vector: Sequence[tuple[str, float]],
    min_similarity: float | None,
) -> bool:
    """Whether anything in the candidates is relevant to ``query`` at all.

    True when the floor is off (``None``), when a content word of the query matched a
    keyword candidate, or when the best cosine reaches ``min_similarity``. Without an
    embedder and without content words there is no signal, so it is True.
    """
    if min_similarity is None:
        return True
    has_content = bool(content_words(query))
    if has_content and keyword:
        return True
    if vector:
        return max(c for _, c in vector) >= min_similarity
    return not has_content and bool(keyword)


def is_relevant_item(
    query: str, text: str, similarity: float | None, min_similarity: float | None
) -> bool:
    """Whether one candidate on its own is relevant to ``query``: a content word of the
    query is among its words, or its cosine reaches ``min_similarity`` (always, when the
    floor is off)."""
    if min_similarity is None:
        return True
    if set(content_words(query)) & set(index_words(text)):
        return True
    return similarity is not None and similarity >= min_similarity


def _normalised(vector: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not vector:
        return {}
    sims = [c for _, c in vector]
    low, high = min(sims), max(sims)
    if high - low <= 1e-9:
        return {i: 1.0 for i, _ in vector}
    return {i: (c - low) / (high - low) for i, c in vector}
