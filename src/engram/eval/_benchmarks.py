"""The two public benchmarks as :class:`Spec` s, and the method line-up."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engram.errors import InvalidInputError
from engram.eval._data import Conversation, Question, Turn, load_locomo, load_longmemeval
from engram.eval._runner import Spec

LOCOMO_CATEGORIES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
"""LoCoMo category numbers as used by the dataset (names follow mem0's evaluation)."""

SCORED = "1-4"
ADVERSARIAL = "5"


def locomo_groups(question: Question) -> Sequence[str]:
    """Categories 1–4 pool into ``1-4``; adversarial (5) is reported on its own."""
    if question.category == ADVERSARIAL:
        return (ADVERSARIAL,)
    return (SCORED, question.category)


def longmemeval_groups(question: Question) -> Sequence[str]:
    return ("all", question.category)


def session_of(turn_id: str) -> str:
    """LongMemEval turn ids are ``<session>#<index>``."""
    return turn_id.rsplit("#", 1)[0]


LOCOMO = Spec(
    name="locomo",
    ks=(5, 10, 20, 50),
    ndcg_k=(10,),
    budgets=(500, 1000, 2000, 4000),
    groups=locomo_groups,
)

LONGMEMEVAL = Spec(
    name="longmemeval",
    ks=(1, 3, 5, 10),
    ndcg_k=(5, 10),
    budgets=(500, 1000, 2000, 4000),
    groups=longmemeval_groups,
    unit=session_of,
)


def limit_questions(haystacks: Sequence[Conversation], limit: int | None) -> list[Conversation]:
    """Keep the first ``limit`` scored questions overall (and only the haystacks they need);
    questions without evidence are never scored, so they do not count."""
    if limit is None:
        return list(haystacks)
    out = []
    left = limit
    for conversation in haystacks:
        if left <= 0:
            break
        questions = tuple(q for q in conversation.questions if q.evidence)[:left]
        left -= len(questions)
        out.append(Conversation(conversation.id, conversation.turns, questions))
    return out


def parse_indices(text: str, count: int) -> list[int]:
    """Haystack indices from ``"0-4"``, ``"5,7,9"`` or ``"0-2,8"`` (each in ``[0, count)``)."""
    out: list[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        if len(bounds) > 2 or not all(b.strip().isdigit() for b in bounds):
            raise InvalidInputError(f"bad haystack selection {text!r}: use e.g. 0-4 or 5,7")
        first, last = int(bounds[0]), int(bounds[-1])
        if not 0 <= first <= last < count:
            raise InvalidInputError(f"haystack selection {text!r} outside 0-{count - 1}")
        out.extend(i for i in range(first, last + 1) if i not in out)
    return out


def with_distractors(conversation: Conversation, others: Sequence[Conversation]) -> Conversation:
    """``conversation`` with the turns of ``others`` in its memory too: a user whose memory
    is several conversations long. Sessions are interleaved (its first session, each
    other's first, its second, ...), so no conversation is all older or all newer than
    the rest; another's turn and session ids get that conversation's id in front, so
    none is taken for one of its own. The questions and their evidence are unchanged."""

    def sessions(c: Conversation, tag: str) -> list[list[Turn]]:
        grouped: dict[str, list[Turn]] = {}
        for turn in c.turns:
            grouped.setdefault(turn.session, []).append(
                replace(turn, id=tag + turn.id, session=tag + turn.session) if tag else turn
            )
        return list(grouped.values())

    every = [sessions(conversation, "")] + [sessions(o, f"{o.id}/") for o in others]
    turns = [
        turn
        for round_ in itertools.zip_longest(*every, fillvalue=[])
        for session in round_
        for turn in session
    ]
    return Conversation(conversation.id, tuple(turns), conversation.questions)


def load(
    benchmark: str,
    data: Path | None,
    limit: int | None,
    haystacks: str | None = None,
    distractors: int = 0,
    assistant: bool = False,
) -> tuple[Spec, list[Conversation]]:
    """The spec and haystacks of ``benchmark`` (``locomo`` or ``longmemeval``): only those
    ``haystacks`` selects by index (see :func:`parse_indices`), then the first ``limit``
    questions. ``distractors`` (LoCoMo): each conversation's memory also holds the turns
    of the next that many conversations (in index order, wrapping round; see
    :func:`with_distractors`). ``assistant`` (LongMemEval): the assistant's replies are
    turns of the memory too."""
    if assistant and benchmark != "longmemeval":
        raise InvalidInputError(f"{benchmark} has no assistant turns: only longmemeval does")
    spec, found = (
        (LOCOMO, load_locomo(data))
        if benchmark == "locomo"
        else (LONGMEMEVAL, [load_longmemeval(data, assistant=assistant)])
    )
    if distractors and not 0 < distractors < len(found):
        raise InvalidInputError(
            f"{benchmark} has {len(found)} haystacks: distractors must be 0"
            + (f" to {len(found) - 1}" if len(found) > 1 else "")
            + f", not {distractors}"
        )
    indices = list(range(len(found))) if haystacks is None else parse_indices(haystacks, len(found))
    chosen = [
        with_distractors(found[i], [found[(i + j) % len(found)] for j in range(1, distractors + 1)])
        if distractors
        else found[i]
        for i in indices
    ]
    return spec, limit_questions(chosen, limit)
