"""Context-aware re-ranking of recalled conversation turns (pure, no I/O).

Turns are not independent facts: the turn that answers a question is often next to the
one that matches it, and the evidence for a question tends to sit in one or two
sessions. :func:`rerank` works on recall's candidates only (their text, cosine
similarity, fused relevance and the session, position and speaker stored in each value):

0. *lexical* (on by default): relevance is fused again from the cosines and a stemmed
   BM25 over the candidates' texts (:mod:`engram.recall._lexical`) in place of the
   backend's exact-word keyword rank; query words naming a speaker are left to step 1,
   and when the query names speakers the cosines are blended with those of the query
   without the names (its *topic*, scored against each candidate's stored vector);
1. *speaker*: the turns of each speaker the query names among the candidates get
   ``speaker`` x their relevance on top (naming both speakers of a two-person chat lifts
   every turn alike; in a memory of many conversations it lifts theirs); *date*: when
   the query names a day, month or year (:mod:`engram.recall._dates`), turns whose
   stored date falls in it (or up to ``date_slack_days`` after: "yesterday I ...") get
   ``date`` x on top;
2. *neighbours*: each turn gains ``neighbours`` x the relevance of the turns up to
   ``window`` positions before and after it in the same session, divided by the distance;
3. *session*: each turn gains ``session`` x the best relevance in its session.

Steps 2-3 lift a speaker's turns in proportion to how short they run against the typical
candidate (:func:`_context_shares`): an assistant's long replies in a user's chat log are
not promoted for their context over the short turns a budget holds several of.

Steps 0-1 are recall's default (``ContextBoost()``, what ``LongTermStore.recall`` and
``engram.Memory.recall`` use): they lift both benchmarks at every budget (docs/eval/
results.md). Steps 2-3 run by default only on a dialogue: candidates of two speakers or
more (``dialogue_neighbours``, ``dialogue_session``), whose answers sit in the turn after
the one that asks; they lift LoCoMo's conversations between two people, and would cost
LongMemEval's log of one user's long turns at every budget, where a turn's neighbours are
more of the same session. :data:`CONVERSATION` turns them on whoever speaks. ``feedback``
(off by default) expands step 0's keyword query with the first pass's best candidates'
distinctive stems (:mod:`engram.recall._feedback`); measured, it does not lift either
benchmark.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from operator import itemgetter
from typing import NamedTuple

from engram.recall._dates import parse as parse_date
from engram.recall._dates import spans
from engram.recall._feedback import expansion
from engram.recall._lexical import Stems, query_stems, scored, stems_of
from engram.recall._relations import as_named, as_relatives
from engram.recall._relevance import relevance as fused_relevance


class Candidate(NamedTuple):
    """One recalled turn: its id, fused relevance, session, position and speaker, and
    (for the lexical step) its text, its cosine with the query and with the query's
    topic (the query without the speakers it names); None when unknown; and the date
    stored with it (any text :func:`engram.recall._dates.parse` reads; "" when none),
    and the stems of its whole text when known (:func:`engram.recall.stems_for`; None:
    taken from the text). A named tuple (immutable, and cheap to build: recall re-ranks
    a pool of them)."""

    id: str
    relevance: float
    session: str
    position: int
    speaker: str
    text: str = ""
    similarity: float | None = None
    topic_similarity: float | None = None
    date: str = ""
    stems: Stems | None = None


POOL_SCALE = 40.0
"""Candidates re-ranked per square root of the memories recall sees: every memory of a
user with up to 1,600, then more slowly than the memory grows (within
:data:`POOL_PER_RESULT` per result asked for)."""

POOL_FLOOR = 100
"""Fewest candidates re-ranked (the ``k`` asked for, when larger)."""

POOL_CEILING = 1000
"""Most candidates re-ranked: each costs a read of its excerpt and a stemmed scoring."""

POOL_PER_RESULT = 10.0
"""Most candidates re-ranked per result asked for (but never fewer than ``pool_floor``):
a recall of 10 re-ranks at most 100, one of 300 (an evaluation's depth) up to the
ceiling. Every candidate's cosine is read from its stored vector, so a small pool loses
little (LoCoMo 0-4, recall@10 with k = 10: 0.719 at 100, 0.723 at 200, 0.725 at 1,000;
docs/eval/results.md), and the cost of a recall grows with what it returns."""


@dataclass(frozen=True, slots=True)
class ContextBoost:
    """Weights of the boosts, the value fields they read, and the candidate pool.

    ``pool`` is how many fused candidates are re-ranked (at least the ``k`` asked for);
    ``None`` sizes it from the memory and the ``k`` asked for: :func:`pool_size` of the
    ``n`` memories recall can see, ``pool_scale * sqrt(n)``, at most ``pool_per_result * k``
    and ``pool_ceiling``, at least ``pool_floor``;
    ``window`` how far neighbours reach; ``lexical`` re-fuses relevance with stemmed
    BM25 first, from cosines that give ``topic`` of their weight to the query's topic
    (the query without the speakers it names, whose names otherwise pull every turn of
    theirs alike, scored against each candidate's stored vector). By default
    ``neighbours`` and ``session`` are 0, and a dialogue (candidates of two speakers or
    more: :meth:`weighed`) gets ``dialogue_neighbours`` and ``dialogue_session`` instead:
    a fact or one speaker's log gets only the lexical, speaker and date steps (no turn is
    promoted for its neighbours).
    ``date`` boosts turns whose ``date_field`` value (or, when a memory has none, the day
    it became valid: ``valid_from``, by default when it was remembered) falls in a time
    the query names, or at most ``date_slack_days`` after it. ``feedback`` > 0 scores the
    lexical step's BM25 again with up to ``feedback_terms`` stems of the
    ``feedback_docs`` best first-pass candidates added, weighted at most ``feedback``
    (``feedback_names_only``: only their capitalised words; see
    :mod:`engram.recall._feedback`).
    """

    speaker: float = 0.5
    neighbours: float = 0.0
    session: float = 0.0
    dialogue_neighbours: float = 0.3
    dialogue_session: float = 0.5
    session_field: str = "session"
    position_field: str = "position"
    speaker_field: str = "speaker"
    pool: int | None = None
    pool_scale: float = POOL_SCALE
    pool_floor: int = POOL_FLOOR
    pool_ceiling: int = POOL_CEILING
    pool_per_result: float = POOL_PER_RESULT
    window: int = 2
    lexical: bool = True
    topic: float = 0.6
    date: float = 0.6
    date_field: str = "date"
    date_slack_days: int = 7
    feedback: float = 0.0
    feedback_docs: int = 3
    feedback_terms: int = 8
    feedback_names_only: bool = False

    @property
    def contextual(self) -> bool:
        """Whether the neighbour or session step may run (so candidates need their
        session and position)."""
        weights = (self.neighbours, self.session, self.dialogue_neighbours, self.dialogue_session)
        return any(weights)

    def weighed(self, speakers: Collection[str]) -> tuple[float, float]:
        """The neighbour and session weights for candidates of these ``speakers``: the
        dialogue's (each at least the given one) when two or more speak."""
        if len({s for s in speakers if s}) < 2:
            return self.neighbours, self.session
        return max(self.neighbours, self.dialogue_neighbours), max(
            self.session, self.dialogue_session
        )


DEFAULT_CONTEXT = ContextBoost()
"""Recall's default re-ranking: the lexical, topic, speaker and date steps, and in a
dialogue the neighbour and session steps."""

CONVERSATION = ContextBoost(neighbours=0.3, session=0.5)
"""The neighbour and session boosts whoever speaks, one speaker's log too."""

NO_DIALOGUE = ContextBoost(dialogue_neighbours=0.0, dialogue_session=0.0)
"""The default without the neighbour and session steps in a dialogue (the default before
they were)."""


def pool_size(boost: ContextBoost, visible: int | None, k: int) -> int:
    """How many candidates to re-rank for ``k`` results among ``visible`` memories (None:
    unknown, the most a recall of ``k`` re-ranks)."""
    if boost.pool is not None:
        return max(boost.pool, k)
    most = min(boost.pool_ceiling, math.ceil(boost.pool_per_result * k))
    sized = most if visible is None else math.ceil(boost.pool_scale * math.sqrt(max(visible, 0)))
    return max(k, boost.pool_floor, min(sized, most))


def named_speakers(query: str, speakers: Sequence[str]) -> list[str]:
    """The speakers named in ``query`` (whole words, case as stored)."""
    return [s for s in speakers if s and re.search(rf"\b{re.escape(s)}\b", query)]


def topic_query(
    query: str,
    candidates: Sequence[Candidate],
    boost: ContextBoost,
    introduced: Mapping[str, frozenset[str]] | None = None,
    given: Mapping[str, frozenset[str]] | None = None,
) -> str | None:
    """``query`` without the candidates' speakers it names (and their ``'s``), with the
    names the candidates introduce as relatives said as them
    (:func:`engram.recall._relations.as_relatives`) and the relatives they give a name
    said by it (``given``: :func:`engram.recall._relations.as_named`); None when it
    changes nothing or the topic step is off (``topic`` 0 or ``lexical`` False)."""
    if not (boost.lexical and boost.topic > 0):
        return None
    topic = query
    named = named_speakers(query, sorted({c.speaker for c in candidates}))
    if named:
        names = "|".join(re.escape(n) for n in named)
        topic = re.sub(rf"\b(?:{names})(?:'s)?\b", " ", topic)
    if introduced:
        topic = as_relatives(topic, introduced)
    if given:
        topic = as_named(topic, given)
    topic = " ".join(topic.split())
    return topic if topic and topic != query else None


def _cosine(candidate: Candidate, topic: float) -> float | None:
    if candidate.similarity is None or candidate.topic_similarity is None:
        return candidate.similarity
    return (1.0 - topic) * candidate.similarity + topic * candidate.topic_similarity


def lexical_relevance(
    query: str,
    candidates: Sequence[Candidate],
    leave_out: Sequence[str] = (),
    topic: float = 0.0,
    boost: ContextBoost | None = None,
) -> dict[str, float]:
    """Relevance of each candidate fused from stemmed BM25 over the candidates' texts and
    their cosines (:func:`engram.recall._relevance.relevance`); 0.0 when neither matched.
    With ``boost.feedback`` > 0 the keyword leg is scored again with the query expanded
    by the first pass's best candidates' distinctive stems (:mod:`engram.recall._feedback`)."""
    texts = [_spoken(c) for c in candidates]
    docs = [_stems(c) for c in candidates]
    wanted, _ = query_stems(query, leave_out)
    scores = scored(dict.fromkeys(wanted, 1.0), docs)
    vector = _sorted([(c.id, s) for c in candidates if (s := _cosine(c, topic)) is not None])
    fused = _fused(candidates, scores, vector)
    if boost is not None and boost.feedback > 0:
        scores = _fed_back(query, texts, docs, candidates, fused, leave_out, boost)
        fused = _fused(candidates, scores, vector)
    return fused


def _fused(
    candidates: Sequence[Candidate], scores: Sequence[float], vector: Sequence[tuple[str, float]]
) -> dict[str, float]:
    keyword = _best_first([(c.id, s) for c, s in zip(candidates, scores, strict=True) if s > 0])
    fused = fused_relevance(keyword, vector)
    return {c.id: fused.get(c.id, 0.0) for c in candidates}


def _fed_back(
    query: str,
    texts: Sequence[str],
    docs: Sequence[Stems],
    candidates: Sequence[Candidate],
    first: Mapping[str, float],
    leave_out: Sequence[str],
    boost: ContextBoost,
) -> list[float]:
    """BM25 of ``texts`` for the query's stems (weight 1) and the feedback stems of the
    ``feedback_docs`` best first-pass candidates (weight at most ``feedback``)."""
    wanted, skip = query_stems(query, leave_out)
    order = sorted(range(len(candidates)), key=lambda i: -first[candidates[i].id])
    top = [i for i in order[: boost.feedback_docs] if first[candidates[i].id] > 0]
    extra = expansion(
        {*wanted, *skip},
        texts,
        top,
        boost.feedback_terms,
        boost.feedback,
        boost.feedback_names_only,
    )
    return scored({**extra, **dict.fromkeys(wanted, 1.0)}, docs)


def _stems(candidate: Candidate) -> Stems:
    """The stems BM25 scores of a candidate's text without its ``speaker:`` label: from
    the stems of its whole text when it carries them (the label's stems lead them, as
    the label leads the text), else taken from the text."""
    if candidate.stems is None:
        return stems_of(_spoken(candidate))
    stored = candidate.stems
    if not (candidate.speaker and candidate.text.startswith(f"{candidate.speaker}:")):
        return stored
    label = stems_of(f"{candidate.speaker}:")
    if not stored.startswith(label):
        return stems_of(_spoken(candidate))
    return stored[len(label) :]


def _spoken(candidate: Candidate) -> str:
    """The text without a leading ``speaker:`` label (the speaker step weighs speakers)."""
    label = f"{candidate.speaker}:"
    text = candidate.text
    return text[len(label) :] if candidate.speaker and text.startswith(label) else text


def _sorted(scored: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Best score first; ties keep the given order (the sort is stable)."""
    return sorted(scored, key=itemgetter(1), reverse=True)


def _best_first(scored: Sequence[tuple[str, float]]) -> list[str]:
    return [i for i, _ in _sorted(scored)]


def rerank(
    query: str, candidates: Sequence[Candidate], boost: ContextBoost, today: date | None = None
) -> list[tuple[str, float]]:
    """``(id, boosted score)`` of the candidates, best first (ties keep the given order);
    ``today`` (the day of the recall) dates what the query names relative to it ("10 days
    ago", "last week")."""
    speakers = sorted({c.speaker for c in candidates})
    relevance = _relevance(query, candidates, speakers, boost)
    named = set(named_speakers(query, speakers))
    dated = _in_time(query, candidates, boost, today)
    base = {
        c.id: relevance[c.id]
        * (1 + boost.speaker * (c.speaker in named))
        * (1 + boost.date * (c.id in dated))
        for c in candidates
    }
    neighbours, session = boost.weighed(speakers)
    if not (neighbours or session):  # (facts, one speaker's log: no step adds to base)
        return _sorted([(c.id, base[c.id] + 0.0) for c in candidates])
    best: dict[str, float] = defaultdict(float)  # ("": no session, so none to lift by)
    for c in candidates:
        if c.session:
            best[c.session] = max(best[c.session], base[c.id])
    near = _near(candidates, base, boost.window)
    share = _context_shares(candidates)
    scored = []
    for order, c in enumerate(candidates):
        lift = neighbours * near[c.id] + session * best[c.session]
        score = base[c.id] + share[c.speaker] * lift
        scored.append((-score, order, c.id))
    scored.sort()
    return [(cid, -neg) for neg, _, cid in scored]


def _context_shares(candidates: Sequence[Candidate]) -> dict[str, float]:
    """How much of the neighbour and session steps each speaker's turns get: the typical
    candidate's length over the speaker's typical turn's, at most 1 (medians, in characters).

    A turn is lifted for its context so that the reply beside the turn that matches comes
    with it; a speaker whose turns run several times the typical one (an assistant's long
    answers beside a user's short messages) would spend a context budget on one of them
    where it holds several. Speakers who say about as much as each other (people talking)
    keep nearly all of the lift."""
    lengths = [len(c.text) or 1 for c in candidates]
    typical = statistics.median(lengths)
    spoken: dict[str, list[int]] = defaultdict(list)
    for c, n in zip(candidates, lengths, strict=True):
        spoken[c.speaker].append(n)
    return {s: min(1.0, typical / statistics.median(ns)) for s, ns in spoken.items()}


def names_time(query: str, boost: ContextBoost, today: date | None = None) -> bool:
    """Whether the date step runs for ``query``: it is on and the query names a time
    (relative to ``today`` too, when given)."""
    return boost.date > 0 and bool(spans(query, today))


def _in_time(
    query: str, candidates: Sequence[Candidate], boost: ContextBoost, today: date | None
) -> set[str]:
    """Ids of the candidates whose date falls in a time the query names (or up to
    ``date_slack_days`` after it); empty when the query names none or the step is off."""
    named = spans(query, today) if boost.date > 0 else []
    if not named:
        return set()
    inside = {
        text: day is not None and any(s.contains(day, boost.date_slack_days) for s in named)
        for text in {c.date for c in candidates}
        for day in [parse_date(text)]
    }
    return {c.id for c in candidates if inside[c.date]}


def _relevance(
    query: str, candidates: Sequence[Candidate], speakers: Sequence[str], boost: ContextBoost
) -> Mapping[str, float]:
    topic = boost.topic
    if not (boost.lexical and any(c.text for c in candidates)):
        return {c.id: c.relevance for c in candidates}
    return lexical_relevance(query, candidates, named_speakers(query, speakers), topic, boost)


def _near(
    candidates: Sequence[Candidate], base: Mapping[str, float], window: int
) -> dict[str, float]:
    """Each candidate's neighbours' relevance within ``window`` positions, over distance."""
    at = {(c.session, c.position): c.id for c in candidates}
    out: dict[str, float] = {}
    for c in candidates:
        steps = range(1, window + 1) if c.position >= 0 else range(0)
        out[c.id] = sum(
            base.get(at.get((c.session, c.position + sign * d), ""), 0.0) / d
            for d in steps
            for sign in (-1, 1)
        )
    return out
