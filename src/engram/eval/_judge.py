"""The judge: a chat model labels a generated answer CORRECT or WRONG against the gold one.

The prompt follows the LLM-as-judge score that memory systems report on LoCoMo ("J"):
generous on paraphrase, extra words and date formats, strict on the fact itself. The
reply is parsed by :func:`parse_verdict`, which accepts the shapes models actually give
(a bare label, a sentence then the label, JSON, lower case, Markdown) and returns
``None`` for anything it cannot read unambiguously -- counted as not correct, and
reported as unjudged, never guessed.
"""

from __future__ import annotations

import json
import re
from enum import Enum

JUDGE_PROMPT = """You grade answers to questions about a user's past conversations.
You are given a question, the gold (reference) answer and a generated answer. Label the
generated answer CORRECT or WRONG.

Be generous: the generated answer may be longer, paraphrase the gold answer or add detail;
it is CORRECT when it states the same fact as the gold answer. For dates and times, it is
CORRECT when it names the same day, month, year or period, whatever the format ("7 May
2023", "May 7th", "2023-05-07"). It is WRONG when it contradicts the gold answer, names
another fact, or says it does not know.

Question: {question}
Gold answer: {gold}
Generated answer: {answer}

Explain your reasoning in one short sentence, then give the label alone on the last line:
CORRECT or WRONG."""


class Verdict(Enum):
    """The judge's label of one answer."""

    CORRECT = "CORRECT"
    WRONG = "WRONG"


_LABEL = re.compile(r"\b(not\s+correct|incorrect|correct|wrong)\b", re.IGNORECASE)
_JSON = re.compile(r"\{[^{}]*\}", re.DOTALL)
_DECORATION = " \t*_`#'\".:!()[]-"


def judge_prompt(question: str, gold: str, answer: str) -> str:
    """The judge's one user message for ``answer`` to ``question``."""
    return JUDGE_PROMPT.format(question=question, gold=gold, answer=answer)


def _label(word: str) -> Verdict:
    return Verdict.CORRECT if word.lower() == "correct" else Verdict.WRONG


def _from_json(reply: str) -> Verdict | None:
    for match in _JSON.finditer(reply):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        label = data.get("label") if isinstance(data, dict) else None
        if isinstance(label, str) and _LABEL.fullmatch(label.strip()):
            return _label(label.strip())
    return None


def _last_line(reply: str) -> Verdict | None:
    lines = [ln.strip(_DECORATION) for ln in reply.strip().splitlines() if ln.strip(_DECORATION)]
    if not lines:
        return None
    last = re.sub(r"^(label|verdict|answer|final)\s*[:=-]?\s*", "", lines[-1], flags=re.I)
    last = last.strip(_DECORATION)
    return _label(last) if _LABEL.fullmatch(last) else None


def parse_verdict(reply: str) -> Verdict | None:
    """The label in a judge's ``reply``, or ``None`` when there is none or it is ambiguous.

    In order: a last line that is only a label (``"... so: **correct**."``), a JSON
    ``{"label": ...}``, else every label word of the reply when they all agree
    ("not correct" and "incorrect" read as WRONG).
    """
    found = _last_line(reply) or _from_json(reply)
    if found is not None:
        return found
    labels = {_label(m.group(1)) for m in _LABEL.finditer(reply)}
    return labels.pop() if len(labels) == 1 else None
