"""Authoritative state kept outside the conversation: constraints, approvals, effects, sources.

Pins are plain TypedDicts (checkpointer-safe) merged by :func:`merge_pins`, a LangGraph reducer
keyed on ``key``: a later pin with the same key replaces the earlier one (e.g. a revoked
constraint). They are extracted from messages by rules (:class:`PinRules`) or explicit flags in
``additional_kwargs["engram"]`` and re-rendered into every model call by :func:`render_pins`, so a
summary or a trim can never drop them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from engram.policy import neutralise

PinKind = Literal["constraint", "approval", "effect", "source"]
FLAG = "engram"  # additional_kwargs namespace for explicit pins
SUMMARY_FLAG = "engram_summary"  # marks the summary message written by a compaction
CLEARED_FLAG = "engram_cleared"  # marks a tool result replaced by a stub


class Pin(TypedDict):
    """One pinned fact; ``key`` dedupes, ``message_id`` is its provenance."""

    kind: PinKind
    key: str
    text: str
    message_id: str | None
    active: bool


def merge_pins(left: list[Pin] | None, right: list[Pin] | None) -> list[Pin]:
    """Reducer: union by ``key``, first-seen order, later value wins."""
    merged: dict[str, Pin] = {pin["key"]: pin for pin in left or []}
    for pin in right or []:
        merged[pin["key"]] = pin
    return list(merged.values())


class PinnedState(TypedDict, total=False):
    """State fields that survive compaction, one list per kind, each with the pin reducer."""

    constraints: Annotated[list[Pin], merge_pins]
    approvals: Annotated[list[Pin], merge_pins]
    effects: Annotated[list[Pin], merge_pins]
    sources: Annotated[list[Pin], merge_pins]


class WorkingMemoryState(PinnedState, total=False):
    """A LangGraph state schema: the message history plus the pinned fields."""

    messages: Annotated[list[BaseMessage], add_messages]
    summary: str


FIELD_OF: dict[PinKind, str] = {
    "constraint": "constraints",
    "approval": "approvals",
    "effect": "effects",
    "source": "sources",
}

# "don't" / "never" as an instruction, not as in "I don't know" / "I never heard".
_NEGATION = (
    r"(?:don['’]?t|do\s+not|never)"
    r"(?!\s+(?:know|knew|think|thought|understand|remember|see|saw|get|got|care|mind|heard)\b)"
)
_NOT_A_RULE = r"(?:problem|thanks|thank|worries|idea|way|rush|pressure|need|one|doubt|matter)"
"""What "no" opens that is no rule ("No problem", "No thanks")."""
_CONSTRAINT = (
    r"(?:please\s+|also\s+|and\s+|but\s+|you\s+|i\s+|we\s+|want\s+you\s+to\s+)*"
    rf"(?:{_NEGATION}|only|must|avoid|no\s+more\s+than|at\s+most|always|exclude"
    r"|keep\s+(?:\S+\s+){0,3}?(?:under|below|within|less\s+than|at\s+or\s+below)"
    r"|stay\s+(?:under|below|within|away\s+from|out\s+of)|stick\s+(?:to|with)"
    r"|limit\s+(?:\S+\s+){0,3}?to|cap\s+(?:\S+\s+){0,3}?at|make\s+sure|ensure|be\s+sure\s+to"
    r"|under\s+no\s+circumstances|in\s+no\s+case|nothing\s+(?:over|above|more\s+than|beyond"
    rf"|outside)|no\s+(?!{_NOT_A_RULE}\b)\w+"
    r"|(?:i['\u2019]?d|i\s+would)\s+rather\s+(?:you\s+)?(?:not|didn['\u2019]?t|did\s+not"
    r"|don['\u2019]?t|avoid))\b"
)
_CONSTRAINT_ANYWHERE = (
    rf"(?:[,;:]\s*|\b(?:but|and|please|so)\s+){_NEGATION}\b"
    r"|\bmust(?:\s+not|n'?t)?\b|\bshould\s+never\b"
)
_APPROVAL = (
    r"(?![^\n]*\?\s*$)"  # (never a question: "Should I approve it?")
    r"(?:(?:yes|yeah|yep|yup|sure|ok|okay|alright|all\s+right|sounds\s+good|looks\s+good|great"
    r"|fine|perfect|good|confirmed)[,.!]?\s+)*(?:i\s+)?(?:approve[ds]?|go\s+ahead|lgtm|proceed"
    r"|do\s+it(?!\s+(?:later|tomorrow|next|after|when|if|once)\b)|go\s+for\s+it"
    r"|place\s+(?:the|that|this|it)|execute\s+(?:it|the|that|this)|confirmed"
    r"|you\s+have\s+my\s+(?:approval|permission|go-ahead|ok|consent)"
    r"|you\s+(?:can|may)\s+(?:go\s+ahead|proceed)|that['\u2019]?s\s+approved)\b"
)
_URL = r"https?://[^\s\"'<>)\]]+"


@dataclass(frozen=True)
class PinRules:
    """Rules that turn messages into pins (defaults are conservative English rules)."""

    constraint_start: str = _CONSTRAINT
    constraint_anywhere: str = _CONSTRAINT_ANYWHERE
    approval: str = _APPROVAL
    effect_tools: frozenset[str] = frozenset()
    source_tools: frozenset[str] | None = None  # None: every tool's URLs count as sources
    url: str = _URL
    max_text: int = 240
    """How much of a tool's result an effect pin keeps."""
    max_said: int = 2000
    """How much of a user's constraint or approval a pin keeps: the whole sentence, unless
    it runs past this (then it is cut, and says so and which message said it)."""

    def pattern(self, name: str) -> re.Pattern[str]:
        return _compile(str(getattr(self, name)))


@lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


DEFAULT_RULES = PinRules()
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def normalise_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s$%-]", " ", text.lower()).split())


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def make_pin(kind: PinKind, text: str, message_id: str | None, *, key: str | None = None) -> Pin:
    text = " ".join(text.split())
    return Pin(
        kind=kind,
        key=f"{kind}:{key or normalise_key(text)}",
        text=text,
        message_id=message_id,
        active=True,
    )


PinFields = dict[str, list[Pin]]  # pinned field name -> pins (the shape of a PinnedState)


def extract_pins(messages: Sequence[BaseMessage], rules: PinRules = DEFAULT_RULES) -> PinFields:
    """Pins found in ``messages``, grouped by state field (fields with no pin are omitted)."""
    calls = _tool_calls_by_id(messages)
    found: list[Pin] = []
    for message in messages:
        if message.additional_kwargs.get(SUMMARY_FLAG):
            continue  # a summary is derived text, never a source of authority
        found.extend(_flagged_pins(message))
        if isinstance(message, HumanMessage):
            found.extend(_human_pins(message, rules))
        elif isinstance(message, ToolMessage):
            found.extend(_tool_pins(message, calls.get(message.tool_call_id), rules))
    grouped: dict[str, list[Pin]] = {}
    for pin in found:
        grouped.setdefault(FIELD_OF[pin["kind"]], []).append(pin)
    return {name: merge_pins([], pins) for name, pins in grouped.items()}


def _tool_calls_by_id(messages: Iterable[BaseMessage]) -> dict[str, dict[str, Any]]:
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id"):
                    calls[str(call["id"])] = {"name": call["name"], "args": call["args"]}
    return calls


def _flagged_pins(message: BaseMessage) -> list[Pin]:
    flags = message.additional_kwargs.get(FLAG)
    if not isinstance(flags, dict):
        return []
    pins = []
    for kind, field_name in FIELD_OF.items():
        values = flags.get(kind, flags.get(field_name))
        if values is None or values is False:
            continue
        for value in values if isinstance(values, list) else [values]:
            text = message.text if value is True else str(value)
            pins.append(make_pin(kind, text, message.id))
    return pins


def _human_pins(message: HumanMessage, rules: PinRules) -> list[Pin]:
    pins = []
    for sentence in split_sentences(message.text):
        if rules.pattern("approval").match(sentence):
            pins.append(make_pin("approval", _said(sentence, message, rules), message.id))
        elif _is_constraint(sentence, rules):
            pins.append(make_pin("constraint", _said(sentence, message, rules), message.id))
    return pins


def _said(sentence: str, message: BaseMessage, rules: PinRules) -> str:
    if len(sentence) <= rules.max_said:
        return sentence
    return f"{sentence[: rules.max_said]}… (cut: message {message.id or 'unnamed'})"


def _is_constraint(sentence: str, rules: PinRules) -> bool:
    if rules.pattern("constraint_start").match(sentence):
        return True
    return rules.pattern("constraint_anywhere").search(sentence) is not None


def _tool_pins(message: ToolMessage, call: dict[str, Any] | None, rules: PinRules) -> list[Pin]:
    if message.status == "error" or message.additional_kwargs.get(CLEARED_FLAG):
        return []  # a failed call did nothing; a cleared stub was read before it was cleared
    name = message.name or (call or {}).get("name") or "tool"
    artifact = message.artifact if isinstance(message.artifact, dict) else {}
    pins = _effect_pins(message, name, call, artifact, rules)
    refs = list(artifact.get("sources") or [])
    if rules.source_tools is None or name in rules.source_tools:
        refs = rules.pattern("url").findall(message.text) + refs
    pins.extend(make_pin("source", str(ref), message.id, key=str(ref)) for ref in refs)
    return pins


def _effect_pins(
    message: ToolMessage,
    name: str,
    call: dict[str, Any] | None,
    artifact: dict[str, Any],
    rules: PinRules,
) -> list[Pin]:
    if artifact.get("effect"):
        text = str(artifact["effect"])
    elif name in rules.effect_tools:
        args = json.dumps((call or {}).get("args", {}), sort_keys=True, default=str)
        text = f"{name}({args}) -> {' '.join(message.text.split())[: rules.max_text]}"
    else:
        return []
    return [make_pin("effect", text, message.id, key=message.tool_call_id)]


_HEADINGS: dict[str, str] = {
    "constraints": "User constraints (binding; they override anything else in this conversation)",
    "approvals": "Approvals given by the user",
    "effects": "Completed effects (already done: do not repeat them)",
    "sources": "Source references",
}


def render_pins(state: Mapping[str, Any], *, max_sources: int = 20) -> str:
    """The pinned block for the system message; empty when there is nothing pinned."""
    sections = []
    for field_name, heading in _HEADINGS.items():
        pins = [pin for pin in state.get(field_name) or [] if pin.get("active", True)]
        if field_name == "sources":
            pins = pins[-max_sources:]
        if pins:
            lines = "\n".join(f"- {_shown(pin)}" for pin in pins)
            sections.append(f"{heading}:\n{lines}")
    if not sections:
        return ""
    body = "\n\n".join(sections)
    return (
        "<pinned-state>\nAuthoritative state of this conversation, kept outside its history "
        f"and summary.\n\n{body}\n</pinned-state>"
    )


def _shown(pin: Mapping[str, Any]) -> str:
    """A pin's text safe inside the block (:func:`engram.policy.neutralise`: markup and
    look-alike brackets escaped), an effect's own ``name(args) -> result`` arrow kept."""
    text = neutralise(str(pin["text"]))
    return text.replace(" -&gt; ", " -> ", 1) if pin.get("kind") == "effect" else text


def pins_of(state: Mapping[str, Any]) -> PinFields:
    """Only the pinned fields of a larger state mapping (every field present)."""
    return {f: list(state.get(f) or []) for f in FIELD_OF.values()}


def new_pins(current: Mapping[str, Any], found: Mapping[str, list[Pin]]) -> PinFields:
    """The pins of ``found`` whose key ``current`` lacks.

    Re-reading the history never overrides a pin already in state, so a pin the application
    revoked (``active=False``) stays revoked while its message is still in the history.
    """
    update: dict[str, list[Pin]] = {}
    for field_name, pins in found.items():
        known = {pin["key"] for pin in current.get(field_name) or []}
        fresh = [pin for pin in pins if pin["key"] not in known]
        if fresh:
            update[field_name] = fresh
    return update
