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
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from engram.context._checks import check_count, check_messages
from engram.errors import InvalidInputError
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
    merged: dict[str, Pin] = {pin["key"]: pin for pin in check_pins("pins", left)}
    for pin in check_pins("pins", right):
        merged[pin["key"]] = pin
    return list(merged.values())


def check_pins(name: str, value: Any) -> list[Pin]:
    """The pins of one field, refused unless a list of mappings with a str ``key`` and ``text``."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InvalidInputError(f"{name} must be a list of pins, got {type(value).__name__}")
    for index, pin in enumerate(value):
        if not (
            isinstance(pin, Mapping)
            and isinstance(pin.get("key"), str)
            and isinstance(pin.get("text"), str)
        ):
            raise InvalidInputError(
                f"{name}[{index}] is not a pin: a pin is a mapping with a str 'key' and 'text'"
            )
    return list(value)


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

_AP = "['\u2019]"  # an apostrophe, typed or typographic
# "don't" / "never" as an instruction, not as in "I don't know" / "I never heard".
_NEGATION = (
    r"(?:don['’]?t|do\s+not|never)"
    r"(?!\s+(?:know|knew|think|thought|understand|remember|see|saw|get|got|care|mind|heard|worry"
    r"|\w+ed)\b)"
    r"(?!\s+(?:you|we|they|he|she|it)\b[^\n]*\?\s*$)"  # (a question: "Don't you love it?")
)
_PAST = (
    r"(?![^.!?\n]*\b(?:was|were|had|did|got|came|went|showed|happened|told|said|ago|yesterday"
    r"|last\s+(?:night|week|month|year|time))\b)"
)
"""Lookahead: the rest of the sentence tells no past event ("Only 3 people showed up")."""
_NAME_NEXT = r"(?!\s+(?-i:[A-Z][a-z]))"
"""Lookahead: no capitalised word follows ("Max Verstappen", "Maxine" is no limit)."""
_DEDUCED = (
    r"(?!\s+be\s+(?:\w+ing|tired|right|kidding|joking|wrong|mistaken|new|busy)\b)"
    rf"(?!\s+(?:have|{_AP}ve)\s+(?:been|\w+(?:ed|en)|left|lost|got|had|gone|done|made|seen|taken"
    r"|forgot)\b)"
)
"""Lookahead: "must" is no guess about the past ("I must have left my keys there")."""
_NOT_A_RULE = r"(?:problem|thanks|thank|worries|idea|way|rush|pressure|need|one|doubt|matter)"
"""What "no" opens that is no rule ("No problem", "No thanks")."""
_EXCLUDED = (
    r"(?:over|above|more\s+than|beyond|outside|in|into|from|with|involving|after|before|below|under"
    r"|less\s+than|goes\s+(?:in|into|to)|go(?:es)?\s+(?:in|into|to))\b"
)
"""What "nothing" or "none of my ..." rules out: "Nothing in Russian stocks", "nothing after
Friday", "None of my money goes into tobacco" (not "Nothing much happened")."""
_UNABLE = (
    r"(?!(?:wait|believe|remember|find|decide|tell|imagine|stand|help|stop|thank|say|see|hear"
    r"|get\s+over|be\s+(?:able|there|around|home|long|late|sure)|make\s+it|sleep|complain)\b)"
)
"""After "I can't" / "I won't": a limit the user sets ("I can't fly before 9am", "I won't
accept fees above 1%"), not a feeling ("I can't wait", "I won't be home")."""
_FIGURE = (
    r"(?:[^\w\s]{0,2}\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty"
    r"|a\s+hundred|a\s+thousand|half|a\s+third|a\s+quarter)\b)"
)
"""An amount: a figure (after a currency sign or two) or a number word."""
_LIMIT = (
    r"(?![^\n]*\?\s*$)"  # (a question about a limit sets none)
    rf"(?:max(?:imum)?\b{_NAME_NEXT}|min(?:imum)?\b{_NAME_NEXT}|at\s+least|cap|limit|ceiling"
    r"|up\s+to)\b"
    r"(?=\W+(?:\w+\W+){0,4}?[^\w\s]?\d)"  # its figure within a few words
    r"(?![^.!?\n]*\b(?:was|were|had\s+been)\b)"  # (a past fact is no rule)
)
"""A sentence that opens with a limit and names its figure: "Max 10 shares per order",
"Maximum position size is 5%" (not "Max is a golden retriever, about 3 years old")."""
_PROHIBITION = (
    r"refrain\s+from|abstain\s+from|hands\s+off|keep\s+(?:your\s+hands\s+)?off|steer\s+clear"
    r"|keep\s+clear|forbid|prohibit|disallow|veto|ban(?!\s+(?:on|of)\b)"
    rf"|you\s+(?:may|shall)\s+not|you\s+(?:cannot|can{_AP}t|shan{_AP}t)"
    rf"|you(?:{_AP}re|\s+are)\s+not\s+to"
)
"""A sentence that opens by forbidding: "Please refrain from ...", "I forbid ..."."""
_CONSTRAINT = (
    r"(?:please\s+|kindly\s+|also\s+|and\s+|but\s+|just\s+|you\s+|i\s+|we\s+"
    r"|absolutely\s+|strictly\s+|definitely\s+|really\s+"
    r"|want\s+you\s+to\s+)*"
    rf"(?:{_NEGATION}|only(?!\s+just\b){_PAST}|must{_DEDUCED}|avoid|no\s+more\s+than|at\s+most"
    rf"|always(?!\s+\w+ed\b){_PAST}|exclude|skip|leave\s+(?:\S+\s+){{1,4}}?alone"
    rf"|(?:can{_AP}?t|cannot|won{_AP}?t|will\s+not)\s+{_UNABLE}"
    rf"|(?:nothing|none\s+of\s+(?:my|our|the|your|it|them)\b[^.!?\n]*?)\s+{_EXCLUDED}{_PAST}"
    r"(?![^.!?\n]*\b(?:is|are|needs|has|looks|seems|matters|works|happens|beats|compares|stands)\b)"
    r"|keep\s+(?:\S+\s+){0,5}?(?:under|below|within|less\s+than|at\s+or\s+below|at\s+least"
    r"|at\s+most|above|free|clear)"
    r"|stay\s+(?:under|below|within|away\s+from|out\s+of)|stick\s+(?:to|with)"
    r"|limit\s+(?:\S+\s+){0,3}?to|cap\s+(?:\S+\s+){0,3}?at|make\s+sure|ensure|be\s+sure\s+to"
    r"|(?:under|in|on)\s+no\s+(?:circumstances?|conditions?|case|event|account)"
    rf"|(?:no|zero)\s+(?!{_NOT_A_RULE}\b)\w+|{_PROHIBITION}|{_LIMIT}"
    r"|(?:i['\u2019]?d|i\s+would)\s+rather\s+(?:you\s+)?(?:not|didn['\u2019]?t|did\s+not"
    r"|don['\u2019]?t|avoid))\b"
)
_GRANTS = r"(?:approval|permission|consent|authori[sz]ation|clearance|go-ahead|blessing|ok)"
_CONSTRAINT_ANYWHERE = (
    rf"(?:[,;:]\s*|\b(?:but|and|please|so)\s+){_NEGATION}\b"
    rf"|\bmust(?:\s+not|n'?t)?\b{_DEDUCED}|\bshould\s+never\b"
    r"|\b(?:should|must|has\s+to|have\s+to|needs?\s+to)\s+(?:stay|remain|be\s+kept)\s+(?:under|below"
    r"|within|above|less\s+than|out\s+of|away\s+from)\b"
    rf"|[,;:]\s*(?:nothing|none)\s+{_EXCLUDED}"
    # a sign-off asked for: "All purchases above $100 need my sign-off."
    rf"|\b(?:needs?|requires?)\s+(?:my|our)\s+(?:explicit\s+|written\s+)?(?:{_GRANTS}|sign[\s-]?off"
    r"|say[\s-]?so|ok(?:ay)?)\b"
    # a closing "only": "Vegetarian restaurants only."
    rf"|^{_PAST}[^.!?\n]{{1,80}}?\bonly(?:,?\s+please)?[.!]?\s*$"
    rf"|\b(?:so|then|and)\s+(?:no|zero)\s+(?!{_NOT_A_RULE}\b)\w+"
    # not allowed / forbidden, said of anything: "You're not allowed to buy Tesla."
    rf"|\b(?:are|is|am|be|{_AP}re|{_AP}s|{_AP}m)\s+(?:not|never)\s+(?:allowed|permitted)\b"
    rf"|\b(?:aren|isn){_AP}t\s+(?:allowed|permitted)\b"
    rf"|\b(?:is|are|be|{_AP}re|{_AP}s)\s+(?:forbidden|prohibited|banned|off[-\s]limits"
    r"|not\s+an\s+option)\b|\b(?:i|we)\s+(?:forbid|prohibit|disallow|veto|refuse|reject)\b"
)
_CONSTRAINT_STATED = (
    # a refused or negated approval: "Permission denied.", "I'm not approving it."
    rf"(?:\bnot|\bnever|n{_AP}t)\s+(?:be\s+)?(?:approv|authori[sz]|consent)\w*"
    rf"|\b{_GRANTS}\s+(?:is\s+|was\s+)?(?:denied|refused|withheld|revoked|withdrawn|rejected"
    r"|not\s+(?:granted|given))\b"
    # a limit with its figure: "Sell the bonds, but no more than $3k."
    rf"|\b(?:no|not)\s+(?:more|higher|greater|larger|bigger|less|lower|fewer)\s+than\s+{_FIGURE}"
    rf"|\b(?:max(?:imum)?\.?|at\s+most|capped\s+at|limited\s+to)\s+(?:of\s+)?{_FIGURE}"
    # a limit stated as a value now: "My spending cap is 300 a week."
    rf"|\b(?:my|our|the)\s+(?:max(?:imum)?\s+|min(?:imum)?\s+)?(?:\w+\s+)?(?:cap|limit|ceiling"
    rf"|budget)\s+(?:(?:for|on|of)\s+(?:\w+\s+){{1,3}}?)?is\s+{_FIGURE}"
)
_ACK = (
    r"(?:yes|yeah|yep|yup|sure|ok|okay|alright|all\s+right|sounds\s+good|looks\s+good|great"
    r"|fine|perfect|good|confirmed|agreed|authori[sz]ed|fine\s+by\s+me|(?:that\s+)?works\s+for\s+me)"
)
_ACTS = r"(?:buy|sell|send|pay|transfer|wire|place|execute|publish|submit|book|sign|order)"
_APPROVAL = (
    r"(?![^\n]*\?\s*$)"  # (never a question: "Should I approve it?")
    rf"(?:(?:{_ACK}[,.!]?\s+)*(?:i\s+(?:hereby\s+)?)?(?:approve[ds]?(?!\s+of\b)|authori[sz]e[ds]?"
    r"|consent(?:s|ed)?|go\s+ahead|lgtm|proceed"
    r"|do\s+it(?!\s+(?:later|tomorrow|next|after|when|if|once)\b)|go\s+for\s+it"
    r"|place\s+(?:the|that|this|it)|execute\s+(?:it|the|that|this)|confirmed"
    rf"|you(?:\s+have|{_AP}ve)(?:\s+got)?\s+(?:my|the|our)\s+(?:{_GRANTS}|green[\s-]*light)"
    rf"|(?:give|grant)\s+(?:you\s+)?(?:my\s+)?{_GRANTS}|{_GRANTS}\s+(?:is\s+)?(?:granted|given)"
    r"|green[\s-]*light"
    rf"|you(?:{_AP}re|\s+are)\s+(?:cleared|authori[sz]ed|approved|good)\s+to"
    r"|you\s+(?:can|may)\s+(?:go\s+ahead|proceed)|that['\u2019]?s\s+approved)\b"
    # an assent, then the act itself: "Yes, buy it."
    rf"|(?:{_ACK}[,.!]?\s+)+(?:please\s+)?{_ACTS}\s+(?:it|them|that|this|those|these|the)\b)"
)
_PAUSE = r"[,;:\u2013\u2014]|\s-\s"  # punctuation between clauses
_BREAK = rf"{_PAUSE}|\b(?:but|except|provided|as\s+long\s+as|so\s+long\s+as)\b"
_REFUSAL = (
    r"\b(?:not|never|nothing|none|nobody|neither|nor|cannot|dont"
    rf"|no(?!\s+(?:{_NOT_A_RULE}|more|less|fewer)\b))\b|n{_AP}t\b"
)
_DEFERRAL = (
    r"\b(?:later|tomorrow|until|till|unless|not\s+yet|next\s+(?:week|month|year|time|session)"
    r"|only\s+(?:after|once|when|if)|(?:after|once|when)\s+(?:i|we)"
    r"|if\s+(?:i|we)\s+(?:say|confirm|agree|approve|sign))\b"
)
_REVERSAL = (
    rf"(?:{_NEGATION}|not\b(?!\s+(?:more|less|fewer|over|above|below|under)\b)"
    rf"|no\s+(?!(?:{_NOT_A_RULE}|more|less|fewer)\b)|nothing|none|cancel|stop|hold\s+off|abort"
    r"|wait)"
)
_WITHHELD = (
    rf"(?:(?!{_BREAK}).)*?(?:{_REFUSAL})"  # a refusal in the approval's own clause
    rf"|.*?{_DEFERRAL}"  # a deferral: "only after I confirm", "until I see the numbers"
    rf"|(?:(?!{_PAUSE}).)*(?:{_PAUSE})\s*{_REVERSAL}"  # "Confirmed: do not place it."
)
_URL = r"https?://[^\s\"'<>)\]]+"


@dataclass(frozen=True)
class PinRules:
    """Rules that turn messages into pins (defaults are conservative English rules)."""

    constraint_start: str = _CONSTRAINT
    constraint_anywhere: str = _CONSTRAINT_ANYWHERE
    constraint_stated: str = _CONSTRAINT_STATED
    """Searched anywhere in a sentence that is not a question: a limit with its figure or a
    refused permission binds when said, not when asked about ("Is the max 10 shares?")."""
    approval: str = _APPROVAL
    approval_withheld: str = _WITHHELD
    """Matched from where an approval ends: a refusal in its own clause ("I approve nothing"),
    a deferral ("only after I confirm") or a reversal ("Confirmed: do not ...") makes the
    sentence a constraint instead -- a refusal must never read as consent."""
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
_SENTENCE = re.compile(
    r"(?<!\bmax\.)(?<!\bmin\.)(?<!\bapprox\.)(?<!\bno\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)"
    r"(?<=[.!?;])\s+|\n+",
    re.IGNORECASE,
)
"""Sentence ends, but not after an abbreviation ("Max. 5 positions" is one sentence)."""


_MEANINGFUL = frozenset("%‰‱<>≤≥≠=+-−±")
"""Symbols that change what a rule says ("< 800" is not "> 800"); currency signs count too."""


def normalise_key(text: str) -> str:
    """The dedupe key of a pin's text: case, spacing, width and punctuation folded away, but
    never a digit, a currency sign or a comparison (€500 and £500 are different limits)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return " ".join("".join(_key_char(char) for char in folded).split())


def _key_char(char: str) -> str:
    if char.isalnum() or char == "_" or char in _MEANINGFUL:
        return char
    return char if unicodedata.category(char) == "Sc" else " "


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
    messages = check_messages(messages)
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
    for sentence in _statements(message.text, rules):
        kind = _sentence_kind(sentence, rules)
        if kind is not None:
            pins.append(make_pin(kind, _said(sentence, message, rules), message.id))
    return pins


def _statements(text: str, rules: PinRules) -> list[str]:
    """Sentences, except that an approval ending in ";" is read with the sentence after it:
    in "Confirmed; nothing should be sold" the second half decides what the first means."""
    statements: list[str] = []
    pending = ""  # an approval ending in ";", waiting for the sentence that completes it
    for sentence in split_sentences(text):
        if pending:
            statements.append(f"{pending} {sentence}")
            pending = ""
        elif sentence.endswith(";") and rules.pattern("approval").match(sentence):
            pending = sentence
        else:
            statements.append(sentence)
    return [*statements, pending] if pending else statements


def _sentence_kind(sentence: str, rules: PinRules) -> PinKind | None:
    """What a user's sentence pins: an approval, a constraint (a withheld approval is one)."""
    approval = rules.pattern("approval").match(sentence)
    if approval is not None:
        withheld = rules.pattern("approval_withheld").match(sentence, approval.end())
        return "constraint" if withheld else "approval"
    return "constraint" if _is_constraint(sentence, rules) else None


def _said(sentence: str, message: BaseMessage, rules: PinRules) -> str:
    if len(sentence) <= rules.max_said:
        return sentence
    return f"{sentence[: rules.max_said]}… (cut: message {message.id or 'unnamed'})"


def _is_constraint(sentence: str, rules: PinRules) -> bool:
    if rules.pattern("constraint_start").match(sentence):
        return True
    if rules.pattern("constraint_anywhere").search(sentence):
        return True
    asked = sentence.rstrip().endswith("?")
    return not asked and rules.pattern("constraint_stated").search(sentence) is not None


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
        text = _clip(str(artifact["effect"]), rules.max_said)
    elif name in rules.effect_tools:
        args = json.dumps((call or {}).get("args", {}), sort_keys=True, default=str)
        result = " ".join(message.text.split())
        text = f"{name}({_clip(args, rules.max_text)}) -> {_clip(result, rules.max_text)}"
    else:
        return []
    return [make_pin("effect", text, message.id, key=message.tool_call_id)]


def _clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, marked when cut: a pin re-sent on every call must
    stay small, and must not pass a fragment off as the whole."""
    return text if len(text) <= limit else f"{text[:limit]}… [cut]"


_HEADINGS: dict[str, str] = {
    "constraints": "User constraints (binding; they override anything else in this conversation)",
    "approvals": "Approvals given by the user",
    "effects": "Completed effects (already done: do not repeat them)",
    "sources": "Source references",
}


def render_pins(state: Mapping[str, Any], *, max_sources: int = 20) -> str:
    """The pinned block for the system message; empty when there is nothing pinned."""
    max_sources = check_count("max_sources", max_sources)
    sections = []
    for field_name, heading in _HEADINGS.items():
        pins = [pin for pin in _field(state, field_name) if pin.get("active", True)]
        if field_name == "sources":
            pins = pins[max(0, len(pins) - max_sources) :]
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
    return {f: _field(state, f) for f in FIELD_OF.values()}


def _field(state: Mapping[str, Any], field_name: str) -> list[Pin]:
    if not isinstance(state, Mapping):
        raise InvalidInputError(f"state must be a mapping, got {type(state).__name__}")
    return check_pins(f"state[{field_name!r}]", state.get(field_name))


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
