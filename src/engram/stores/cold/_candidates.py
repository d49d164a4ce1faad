"""Recall's candidates: the two candidate searches, run at the same time, and the
context re-ranking of what they found.

The keyword search runs in a worker thread while the caller embeds the query
and runs the vector search: engines release the GIL while they work (SQLite
while it steps, numpy in its matrix product), so the two overlap on a second core.
The workers live as long as the process (created on first use): starting a
thread per query cost ~4 ms on a loaded 2-core machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from operator import itemgetter
from typing import NamedTuple

from engram.recall import (
    Candidate,
    ContextBoost,
    Embedder,
    Weights,
    about_someone_else,
    another_choice,
    as_named,
    as_relatives,
    choices_asked,
    combiner,
    confidence,
    cosine_confidence,
    introductions,
    knows_none,
    names_in_query,
    names_of,
    names_time,
    of_others_alone,
    of_the_user,
    others_only,
    people_named,
    rerank,
    stem,
    stem_coverage,
    stems_for,
    topic_query,
    who_is_who,
)
from engram.stores.cold.contract import ColdBackend, Excerpt, Scan

Candidates = tuple[list[str], list[tuple[str, float]]]


@functools.cache
def _keyword_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="engram-keyword")


def candidates(
    backend: ColdBackend,
    embedder: Embedder | None,
    scan: Scan,
    query: str,
    n: int,
    complete: bool = False,
) -> Candidates:
    """``(keyword ids, (id, cosine) pairs)``: up to ``n`` of each, best first. With
    ``complete``, the pairs also hold the cosine of each keyword id the vector search
    did not return (:meth:`ColdBackend.cosines`), so every candidate the re-ranking
    weighs has its cosine, however few each search returns."""
    if embedder is None:
        return backend.keyword_candidates(scan, query, n), []
    keyword = _keyword_pool().submit(backend.keyword_candidates, scan, query, n)
    try:
        qvec = embedder.embed([query])[0]
        vector = backend.vector_candidates(scan, qvec, embedder.model_id, n)
    finally:
        found = keyword.result()
    if complete:
        searched = {row_id for row_id, _ in vector}
        missing = [row_id for row_id in found if row_id not in searched]
        if missing:
            read = backend.cosines(scan, missing, qvec, embedder.model_id)
            vector = sorted([*vector, *read.items()], key=lambda pair: (-pair[1], pair[0]))
    return found, vector


def cosines_of(
    backend: ColdBackend, embedder: Embedder | None, scan: Scan, text: str, ids: Sequence[str]
) -> dict[str, float]:
    """The cosines of ``text`` with the memories ``ids`` that ``scan`` admits (none
    without an embedder)."""
    if embedder is None or not ids:
        return {}
    vector = embedder.embed([text])[0]
    return backend.cosines(scan, ids, vector, embedder.model_id)


class Hit(NamedTuple):
    """A fused candidate before its record is read: its id, score and the signals
    behind it (the fields of :class:`~engram.stores.cold.records.Recalled` but the
    record). A named tuple: a re-ranked recall builds one per candidate of its pool."""

    id: str
    score: float
    relevance: float
    recency: float
    importance: float
    similarity: float | None = None
    keyword_rank: int | None = None
    vector_rank: int | None = None


@dataclass(frozen=True, slots=True)
class Ranking:
    """How re-ranked candidates are scored: the store's weights, the cosine its
    calibration centres on (its relevance floor), and the day of the recall (what
    dates "yesterday" or "10 days ago" in a query; None: such words date nothing)."""

    weights: Weights
    floor: float
    today: date | None = None
    known: frozenset[str] = frozenset()
    """Stems of the words that name the user (their namespace's parts): a query naming
    only them is not about someone the memory never named."""


def in_context(
    query: str,
    found: Sequence[tuple[Hit, Excerpt]],
    boost: ContextBoost,
    cosines: Callable[[str, Sequence[str]], Mapping[str, float]],
    ranking: Ranking,
    k: int,
) -> list[tuple[Hit, float, float]]:
    """The best ``k`` of ``found`` as ``(hit, score, relevance)``, re-ranked by
    :func:`engram.recall.rerank` (when the query names speakers, ``cosines(topic, ids)``
    gives each candidate's cosine with the query without them), then by
    ``alpha*recency + beta*importance + gamma*relevance``, scores calibrated.

    Every candidate with a vector gets its own topic cosine, read from its stored
    vector, whatever the size of the memory: a candidate left without one would keep
    the query's own cosine unblended, on another scale than the candidates beside it."""
    candidates = _candidates(found, boost, names_time(query, boost, ranking.today))
    names = names_in_query(query)
    asked = people_named(query)
    # (a speaker's "my neighbour Anna" is the speaker's, not the user's)
    own = [c.text for c in candidates if not c.speaker] if names or asked else []
    introduced = introductions(names, own) if names else {}
    people = who_is_who(own) if asked else {}  # ("my husband Gareth": Gareth, the husband)
    named = names_of(asked, people)
    topic = topic_query(query, candidates, boost, introduced, named)
    if topic is not None:
        read = cosines(topic, [c.id for c in candidates])
        candidates = [c._replace(topic_similarity=read.get(c.id)) for c in candidates]
    renamed = topic is not None and (
        as_relatives(query, introduced) != query or as_named(query, named) != query
    )
    reranked = rerank(query, candidates, boost, ranking.today)
    top = max(map(itemgetter(1), reranked), default=0.0) or 1.0
    mean = combiner(ranking.weights)
    by_id = {
        hit.id: (n, hit, mean(hit.recency, hit.importance, 1.0)) for n, (hit, _) in enumerate(found)
    }
    relative = [(by_id[i], score / top) for i, score in reranked]
    keys = [-share * prior for (_, _, prior), share in relative]
    chosen = [relative[n] for n in sorted(range(len(keys)), key=keys.__getitem__)[:k]]
    wanted = [n for (n, _, _), _ in chosen]
    best, mine = _confidences(
        query, candidates, ranking, wanted, introduced, renamed, named, people
    )
    out = []
    for (n, hit, prior), share in chosen:
        relevance = min(best * share, mine[n])
        out.append((hit, relevance * prior, relevance))
    return out


def _confidences(
    query: str,
    candidates: Sequence[Candidate],
    ranking: Ranking,
    wanted: Sequence[int],
    introduced: Mapping[str, frozenset[str]],
    renamed: bool,
    named: Mapping[str, frozenset[str]] | None = None,
    people: Mapping[str, frozenset[str]] | None = None,
) -> tuple[float, dict[int, float]]:
    """How well the best of ``candidates`` matches ``query`` (each with the stems of
    its text), and how well each at the positions ``wanted`` does
    (:mod:`engram.recall._calibrate`).

    Only a candidate holding a query term or the one of highest cosine can be the best:
    without a term a candidate's confidence grows with its cosine alone. A candidate
    about someone else than the relatives or pets the query asks of ("My wife's name is
    Priya" for "What is my cat's name?", "I work as an accountant" for "What did my
    mother do for work?") gets no confidence from its cosine
    (:func:`engram.recall.about_someone_else`), and no candidate does when the query
    names only people or things none of them names (:func:`engram.recall.knows_none`).
    A name the candidates say is a relative's (``introduced``: "My daughter Emma is
    seven") is asked of as that relative: "My son is allergic to peanuts" is about
    someone else for "Is Emma allergic to anything?". A query about the user alone
    ("Which city do I live in?") is not answered by a memory about the user's people
    alone ("My sister lives in Toronto": :func:`engram.recall.of_others_alone`). And
    when the topic said the names as the relatives (``renamed``: "What is my wife's
    job?" for "What is Priya's job?", or "What does Gareth do?" for "What does my
    husband do?" when a memory ``named`` him), a candidate's cosine is the better of the
    query's and the topic's, and a memory naming him is about him."""
    floor = ranking.floor
    docs = [stems_for(c.text, c.stems) for c in candidates]
    coverage = stem_coverage(query, docs)
    choices = choices_asked(query)
    chosen = (
        {n for n, c in enumerate(candidates) if another_choice(choices, c.text)}
        if choices
        else set()
    )
    for n in chosen:  # ("My favourite author is ..." for "What's my favourite film?")
        coverage[n] = 0.0
    unheard = knows_none(names_in_query(query), docs, ranking.known)
    asked = people_named(query).union(*introduced.values())
    alone = others_only(query, bool(introduced))
    mine = of_the_user(query)
    theirs = [f" {name}" for name in introduced]
    theirs += [f" {stem(n.lower())} " for said in (named or {}).values() for n in said]

    def cosine(n: int) -> float | None:  # (the text is read only for the candidates scored)
        similarity = candidates[n].similarity
        if unheard or similarity is None:
            return None
        if renamed and (topical := candidates[n].topic_similarity) is not None:
            similarity = max(similarity, topical)
        if any(name in docs[n] for name in theirs):  # (a memory naming Emma is hers)
            return similarity
        if asked and about_someone_else(asked, candidates[n].text, alone, people):
            return None
        if n in chosen:
            return None
        if mine and of_others_alone(candidates[n].text):  # ("My sister lives in Toronto")
            return None
        return similarity

    sims = [(c.similarity, n) for n, c in enumerate(candidates) if c.similarity is not None]
    if unheard:
        highest = None
    elif renamed:  # (a topic's cosine may be above the query's)
        scored = (s for n in range(len(candidates)) if (s := cosine(n)) is not None)
        highest = max(scored, default=None)
    elif asked or mine:  # the highest cosine of a candidate not about someone else
        ranked = sorted(sims, reverse=True)
        highest = next((s for _, n in ranked if (s := cosine(n)) is not None), None)
    else:
        highest = max(sims)[0] if sims else None
    best = max(
        [confidence(cosine_confidence(highest, floor), 0.0)]
        + [confidence(cosine_confidence(cosine(n), floor), c) for n, c in enumerate(coverage) if c]
    )
    own = {n: confidence(cosine_confidence(cosine(n), floor), coverage[n]) for n in wanted}
    return best, own


def _candidates(
    found: Sequence[tuple[Hit, Excerpt]], boost: ContextBoost, dated: bool
) -> list[Candidate]:
    """The re-ranker's view of each of ``found``: the boost's value fields and, when the
    query names a time (``dated``; the date step reads them only then), its date (the
    day it became valid when it has no ``date_field``). Session and position are read
    only for the steps that use them (neighbours, session); otherwise they are left
    unknown ("" and -1)."""
    contextual = boost.contextual
    session, position, speaker, date = (
        boost.session_field,
        boost.position_field,
        boost.speaker_field,
        boost.date_field,
    )
    return [
        Candidate(
            hit.id,
            hit.relevance,
            str(value.get(session, "")) if contextual else "",
            at if contextual and isinstance(at := value.get(position), int) else -1,
            str(value.get(speaker, "")),
            excerpt.text,
            hit.similarity,
            None,
            str(value.get(date) or excerpt.valid_from.date().isoformat()) if dated else "",
            stems_for(excerpt.text, excerpt.stems),
        )
        for hit, excerpt in found
        for value in (excerpt.value,)
    ]
