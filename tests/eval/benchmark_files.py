"""Small benchmark files in the exact formats of LoCoMo and LongMemEval, built by the tests.

The real files (``locomo10.json``, ``longmemeval_oracle_sample_seed_42.json``) are not
in the repository; these stand-ins carry every quirk the loaders must handle:

LoCoMo: session keys out of numeric order (``session_10`` before ``session_2``),
photo turns (``blip_caption``, ``img_url``, ``query``), evidence strings such as
``"D1:2; D2:3"``, ``"D:10:3"`` and ``"D2:05"``, evidence naming no turn, a question
whose only evidence is ``"D"``, integer answers, adversarial questions (category 5,
``adversarial_answer`` and no ``answer``) and summaries the loader must ignore.

LongMemEval: user and assistant messages with ``has_answer``, one session that two
questions share (pooled once), abstention questions (``_abs``) and multi-session
questions with two answer sessions.

Every turn names one object no other turn names, and every question names the
objects of its evidence, so a keyword method must rank the evidence first: a
harness that mixes up ids, units or groups shows it as lost recall.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCOMO_FILE = Path("locomo") / "locomo10.json"
LONGMEMEVAL_FILE = Path("longmemeval") / "longmemeval_oracle_sample_seed_42.json"

_NOUNS = (
    "accordion anchor anvil apron arrowhead backpack bagpipe banjo barometer basket "
    "bathrobe beanbag bellows bicycle binoculars blender bonnet bookmark boomerang bracelet "
    "briefcase broom bucket cactus calculator camcorder candelabra canoe cardigan carousel "
    "cauldron cello chandelier chessboard chisel clarinet compass corkscrew crayon crossbow "
    "cufflink cushion dartboard decanter dictionary doormat drumstick dumbbell easel eggbeater "
    "envelope fiddle flashlight flowerpot footstool forklift frisbee gazebo glockenspiel goblet "
    "gramophone hammock harmonica harp hatchet headlamp hourglass igloo inkwell jukebox "
    "kaleidoscope kayak kettle keyboard kite ladle lantern lawnmower locket magnifier "
    "mandolin marionette metronome microscope mitten moccasin monocle mortar napkin necklace "
    "notebook oboe ottoman padlock paintbrush parasol pendulum periscope piccolo pinwheel "
    "pitchfork planetarium plunger pogostick quill quilt racquet rake recorder rickshaw "
    "rocking saddle sandal saxophone scarecrow scooter seesaw sextant shovel skateboard "
    "sledgehammer slingshot snorkel spatula spinningtop stapler stethoscope stopwatch "
    "surfboard tambourine teapot telescope thermos thimble toboggan tricycle trombone trowel "
    "tuba typewriter ukulele umbrella unicycle vase violin waffle wagon wardrobe "
    "washboard wheelbarrow whistle windmill wok xylophone yoyo zither"
)
OBJECTS = tuple(_NOUNS.split())
"""Distinct nouns, one per turn: the only words a question shares with its evidence."""

FILLER = (
    "and honestly the whole week felt busy with work and family plans",
    "so we talked about it over coffee for a while after lunch",
    "which reminded me how much I enjoy simple weekends at home",
    "but the weather kept changing and nobody could decide what to do",
)
"""Words every turn shares (they carry no evidence)."""

LOCOMO_SESSIONS = (1, 10, 2)
"""Session numbers in the order they appear in the file (the loader sorts them)."""
TURNS_PER_SESSION = 6
LOCOMO_DATES = {
    1: "1:56 pm on 8 May, 2023",
    2: "10:37 am on 27 June, 2023",
    10: "7:02 pm on 2 Oct, 2023",
}
CAPTION = "a photo of a dog walking past a wall with a painting"


@dataclass(frozen=True)
class LocomoFacts:
    """What the LoCoMo stand-in holds, as the loader should read it."""

    conversations: int
    turns: int
    questions: int
    unscored: int
    categories: dict[str, int]
    """Scored questions per category ("1".."5")."""


@dataclass(frozen=True)
class LongMemEvalFacts:
    """What the LongMemEval stand-in holds, as the loader should read it."""

    questions: int
    abstention: int
    user_turns: int
    sessions: int
    types: dict[str, int]


class _Objects:
    """Hands out each noun of :data:`OBJECTS` once."""

    def __init__(self) -> None:
        self._left = list(OBJECTS)

    def take(self) -> str:
        return self._left.pop(0)


# --- LoCoMo --------------------------------------------------------------------------


def _locomo_turn(speaker: str, session: int, index: int, thing: str) -> dict[str, Any]:
    filler = FILLER[(session + index) % len(FILLER)]
    turn: dict[str, Any] = {
        "speaker": speaker,
        "dia_id": f"D{session}:{index}",
        "text": f"I finally found my old {thing} in the attic, {filler}.",
    }
    if index == 2:
        turn.update(
            img_url=["https://example.org/photo.jpg"], blip_caption=CAPTION, query="old photo"
        )
    return turn


def _locomo_conversation(
    number: int, objects: _Objects
) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    speakers = (f"Ann{number}", f"Bob{number}")
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    things: dict[str, tuple[str, str]] = {}
    for session in LOCOMO_SESSIONS:
        turns = []
        for index in range(1, TURNS_PER_SESSION + 1):
            speaker, thing = speakers[index % 2], objects.take()
            turns.append(_locomo_turn(speaker, session, index, thing))
            things[f"D{session}:{index}"] = (speaker, thing)
        conversation[f"session_{session}_date_time"] = LOCOMO_DATES[session]
        conversation[f"session_{session}"] = turns
    return conversation, things


def _ask(things: dict[str, tuple[str, str]], ids: list[str]) -> str:
    named = " and the ".join(things[i][1] for i in ids)
    return f"What did {things[ids[0]][0]} say about the {named}?"


def _locomo_qa(things: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    plain = [
        {"question": _ask(things, [i]), "answer": "in the attic", "evidence": [i], "category": c}
        for i, c in (("D1:1", 4), ("D1:3", 1), ("D2:4", 2), ("D10:5", 3), ("D10:6", 4))
    ]
    odd = [
        # One string naming two turns; a colon after D; a leading zero; a turn that
        # does not exist (dropped, the real one kept).
        {
            "question": _ask(things, ["D1:2", "D2:3"]),
            "answer": 2022,
            "evidence": ["D1:2; D2:3"],
            "category": 1,
        },
        {
            "question": _ask(things, ["D10:3"]),
            "answer": "yes",
            "evidence": ["D:10:3"],
            "category": 2,
        },
        {
            "question": _ask(things, ["D2:5"]),
            "answer": "no",
            "evidence": ["D2:05", "D9:99"],
            "category": 4,
        },
        {
            "question": _ask(things, ["D10:1"]),
            "adversarial_answer": "a kite",
            "evidence": ["D10:1"],
            "category": 5,
        },
        {"question": "What is unknowable here?", "answer": "n/a", "evidence": ["D"], "category": 3},
    ]
    return plain + odd


def locomo_samples() -> list[dict[str, Any]]:
    """The LoCoMo stand-in as the JSON list ``locomo10.json`` holds."""
    objects = _Objects()
    samples = []
    for number in range(3):
        conversation, things = _locomo_conversation(number, objects)
        samples.append(
            {
                "qa": _locomo_qa(things),
                "conversation": conversation,
                "event_summary": {"events_session_1": ["SUMMARYONLY event"]},
                "observation": {"session_1_observation": {"Ann": [["SUMMARYONLY", "D1:1"]]}},
                "session_summary": {"session_1_summary": "SUMMARYONLY summary"},
                "sample_id": f"conv-{number}",
            }
        )
    return samples


LOCOMO = LocomoFacts(
    conversations=3,
    turns=54,
    questions=30,
    unscored=3,
    categories={"1": 6, "2": 6, "3": 3, "4": 9, "5": 3},
)
"""Three conversations of three sessions of six turns; ten questions each, one unscored."""

# --- LongMemEval ---------------------------------------------------------------------

LME_TYPES = (
    "single-session-user",
    "knowledge-update",
    "multi-session",
    "temporal-reasoning",
    "single-session-preference",
    "multi-session",
)
LME_SHARED = "sharedsession_1"
"""A session in the haystack of the first two questions (stored once)."""


def _lme_session(objects: _Objects, wanted: list[str]) -> list[dict[str, Any]]:
    messages = []
    for index in range(3):
        thing = objects.take()
        messages.append(
            {
                "role": "user",
                "content": f"Can you help me clean my {thing}? {FILLER[index]}.",
                "has_answer": index == 0,
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": "Sure, here are a few steps for that.",
                "has_answer": False,
            }
        )
        if index == 0:
            wanted.append(thing)
    return messages


def _lme_record(number: int, objects: _Objects, shared: list[dict[str, Any]]) -> dict[str, Any]:
    kind = LME_TYPES[number % len(LME_TYPES)]
    answers = 2 if kind == "multi-session" else 1
    wanted: list[str] = []
    ids = [f"answer_q{number}_{i}" for i in range(1, answers + 1)]
    sessions = [_lme_session(objects, wanted) for _ in ids]
    dates = [f"2023/0{1 + number % 9}/1{i} (Mon) 0{i}:30" for i in range(len(ids))]
    if number < 2:
        ids, sessions, dates = (
            [*ids, LME_SHARED],
            [*sessions, shared],
            [*dates, "2023/01/02 (Mon) 09:00"],
        )
    suffix = "_abs" if number == 3 else ""
    return {
        "question_id": f"q{number}{suffix}",
        "question_type": kind,
        "question": f"How did I clean the {' and the '.join(wanted)}?",
        "answer": "with a cloth",
        "question_date": f"2023/10/0{1 + number % 9} (Mon) 04:40",
        "haystack_dates": dates,
        "haystack_session_ids": ids,
        "haystack_sessions": sessions,
        "answer_session_ids": ids[:answers],
    }


def longmemeval_records() -> list[dict[str, Any]]:
    """The LongMemEval stand-in as the JSON list the oracle sample holds."""
    objects = _Objects()
    shared = _lme_session(objects, [])
    return [_lme_record(number, objects, shared) for number in range(7)]


LONGMEMEVAL = LongMemEvalFacts(
    questions=6,
    abstention=1,
    user_turns=30,
    sessions=10,
    types={
        "single-session-user": 2,
        "knowledge-update": 1,
        "multi-session": 2,
        "single-session-preference": 1,
    },
)
"""Seven records (the fourth an abstention); two multi-session questions with two answer
sessions each, so nine answer sessions plus the shared one; three user turns a session."""


def write_benchmarks(root: Path) -> Path:
    """Write both stand-ins under ``root`` in the real layout; returns ``root``."""
    for relative, content in (
        (LOCOMO_FILE, locomo_samples()),
        (LONGMEMEVAL_FILE, longmemeval_records()),
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(json.dumps(content, indent=4), encoding="utf-8")
    return root
