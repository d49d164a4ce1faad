"""Loaders for the public benchmarks: LoCoMo (``locomo10.json``) and the LongMemEval oracle sample.

The data is never copied into the repository: it is read from a folder given on the
command line, from ``$ENGRAM_EVAL_DATA``, or from ``../shared/data`` next to the checkout
(LoCoMo: CC BY-NC 4.0; LongMemEval: MIT; see the README, Benchmark data).
Only the conversations, questions and evidence ids are read; LoCoMo's own
summaries and observations are ignored (they are not the user's data).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.errors import ConfigError, InvalidInputError

DATA_ENV = "ENGRAM_EVAL_DATA"
"""Environment variable naming the benchmark data folder."""

LOCOMO_FILE = Path("locomo") / "locomo10.json"
LONGMEMEVAL_FILE = Path("longmemeval") / "longmemeval_oracle_sample_seed_42.json"

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Turn:
    """One message of a conversation, as it will be stored in memory."""

    id: str
    session: str
    date: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    """A retrieval question; ``evidence`` holds the ids of the turns that answer it and
    ``answer`` the gold answer (empty when the benchmark gives none)."""

    id: str
    text: str
    category: str
    evidence: tuple[str, ...]
    date: str = ""
    answer: str = ""


@dataclass(frozen=True)
class Conversation:
    """A haystack of turns (the memory of one user) and the questions asked of it."""

    id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def default_data_root() -> Path:
    """The benchmark folder: ``$ENGRAM_EVAL_DATA``, else ``../shared/data`` beside the
    working directory or beside the checkout engram runs from.

    Raises :class:`ConfigError` when ``$ENGRAM_EVAL_DATA`` names no folder, or when it is
    unset and neither default folder exists.
    """
    named = os.environ.get(DATA_ENV)
    if named:
        root = Path(named).expanduser()
        if not root.is_dir():
            raise ConfigError(f"${DATA_ENV}={named} is not a folder")
        return root
    for candidate in [Path.cwd().parent / "shared" / "data", *_beside_checkout()]:
        if candidate.is_dir():
            return candidate.resolve()
    raise ConfigError(
        f"no benchmark data: pass --data or set ${DATA_ENV} to the folder holding {LOCOMO_FILE}"
        f" and {LONGMEMEVAL_FILE} (see the README, Benchmark data)"
    )


def _beside_checkout() -> list[Path]:
    """``../shared/data`` next to the source checkout (the folder with ``pyproject.toml``)."""
    here = Path(__file__).resolve()
    roots = [p for p in here.parents if (p / "pyproject.toml").is_file()]
    return [roots[0].parent / "shared" / "data"] if roots else []


def resolve(path: Path | None, relative: Path) -> Path:
    """Find a data file given a file, the benchmark's folder, the data root or nothing."""
    root = default_data_root() if path is None else path
    for candidate in (root, root / relative.name, root / relative):
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"benchmark file {relative} not found under {root} (set --data or ${DATA_ENV})"
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"cannot read benchmark file {path}: {exc}") from exc


# --- LoCoMo -------------------------------------------------------------------------


def normalise_evidence(raw: str) -> list[str]:
    """Turn LoCoMo's evidence strings (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``) into ids."""
    return [f"D{s}:{t}" for s, t in _DIA_ID.findall(raw)]


def _locomo_text(raw: dict[str, Any]) -> str:
    text = str(raw.get("text", "")).strip()
    caption = raw.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def _locomo_turns(conv: dict[str, Any]) -> Iterator[Turn]:
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    for number, key in sessions:
        date = str(conv.get(f"{key}_date_time", ""))
        for raw in conv[key]:
            yield Turn(
                str(raw["dia_id"]), f"S{number}", date, str(raw["speaker"]), _locomo_text(raw)
            )


def _locomo_questions(
    sample_id: str, qa: list[dict[str, Any]], known: set[str]
) -> Iterator[Question]:
    for index, raw in enumerate(qa):
        evidence = [e for item in raw.get("evidence", []) for e in normalise_evidence(str(item))]
        kept = tuple(dict.fromkeys(e for e in evidence if e in known))
        yield Question(
            f"{sample_id}/q{index}",
            str(raw["question"]),
            str(raw["category"]),
            kept,
            answer=str(raw.get("answer", "")),
        )


def load_locomo(path: Path | None = None) -> list[Conversation]:
    """Read ``locomo10.json``: one :class:`Conversation` per sample, turns in session order.

    Evidence ids are normalised; ids naming no turn of the conversation are dropped
    (questions left without evidence keep an empty tuple and are not scored).
    """
    data = _read_json(resolve(path, LOCOMO_FILE))
    if not isinstance(data, list):
        raise InvalidInputError("locomo10.json: expected a list of samples")
    out = []
    for sample in data:
        turns = tuple(_locomo_turns(sample["conversation"]))
        known = {t.id for t in turns}
        qa = list(_locomo_questions(str(sample["sample_id"]), sample["qa"], known))
        out.append(Conversation(str(sample["sample_id"]), turns, tuple(qa)))
    return out


# --- LongMemEval ----------------------------------------------------------------------


def _lme_turns(record: dict[str, Any], roles: Collection[str]) -> Iterator[Turn]:
    sessions = zip(
        record["haystack_session_ids"],
        record["haystack_dates"],
        record["haystack_sessions"],
        strict=True,
    )
    for session_id, date, session in sessions:
        for index, raw in enumerate(session):
            if raw["role"] in roles:
                turn_id = f"{session_id}#{index}"
                role = str(raw["role"])
                yield Turn(turn_id, str(session_id), str(date), role, str(raw["content"]))


def load_longmemeval(
    path: Path | None = None, include_abstention: bool = False, assistant: bool = False
) -> Conversation:
    """Read the LongMemEval oracle sample as ONE pooled haystack of user turns (and the
    assistant's replies too with ``assistant``: a chat log of two speakers, ``user`` and
    ``assistant``).

    Every question's sessions go into the same memory, so the other questions' sessions
    are real distractors. A question's evidence is its answer session ids (session-level
    retrieval, as in LongMemEval's own retrieval metrics). Abstention questions
    (``_abs`` ids) are skipped unless ``include_abstention``.
    """
    roles = ("user", "assistant") if assistant else ("user",)
    data = _read_json(resolve(path, LONGMEMEVAL_FILE))
    if not isinstance(data, list):
        raise InvalidInputError("LongMemEval file: expected a list of questions")
    turns: dict[str, Turn] = {}
    questions = []
    for record in data:
        for turn in _lme_turns(record, roles):
            turns.setdefault(turn.id, turn)
        qid = str(record["question_id"])
        if qid.endswith("_abs") and not include_abstention:
            continue
        evidence = tuple(str(s) for s in record["answer_session_ids"])
        questions.append(
            Question(
                qid,
                str(record["question"]),
                str(record["question_type"]),
                evidence,
                str(record["question_date"]),
                str(record["answer"]),
            )
        )
    ordered = tuple(sorted(turns.values(), key=lambda t: (t.date, t.session, _turn_index(t.id))))
    return Conversation("longmemeval-oracle-sample", ordered, tuple(questions))


def _turn_index(turn_id: str) -> int:
    return int(turn_id.rsplit("#", 1)[1])
