"""The two public benchmarks as :class:`Spec` s, and the method line-up."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engram.errors import InvalidInputError
from engram.eval._data import Conversation, Question, load_locomo, load_longmemeval
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


def load(
    benchmark: str, data: Path | None, limit: int | None, haystacks: str | None = None
) -> tuple[Spec, list[Conversation]]:
    """The spec and haystacks of ``benchmark`` (``locomo`` or ``longmemeval``): only those
    ``haystacks`` selects by index (see :func:`parse_indices`), then the first ``limit``
    questions."""
    spec, found = (
        (LOCOMO, load_locomo(data))
        if benchmark == "locomo"
        else (LONGMEMEVAL, [load_longmemeval(data)])
    )
    if haystacks is not None:
        found = [found[i] for i in parse_indices(haystacks, len(found))]
    return spec, limit_questions(found, limit)
