"""What a fact is about, when the caller names no slot (pure).

Two facts that give different values of the same attribute of the user ("My risk
tolerance is conservative", then "I now have a high risk tolerance") must not both be
served as current. :func:`infer_slot` reads the attribute from the common English forms
of a statement about oneself:

- ``My <attribute> is|are|was|has become|changed to <value>``;
- a few single-valued relations: where the user lives, where they work, their age and name.

``<Label>: <value>`` is not read: it is also how a conversation turn names its speaker
("Ann: yesterday I went to the museum"), and two turns of one speaker are no contradiction.

:func:`mentions_slot` tells whether a new fact with no form of its own speaks of an
attribute already inferred for a stored fact ("I now have a *high* risk tolerance").
People, pets and things the user has ("my daughter is learning Python") are not
attributes: a possessive of one of them is left without a slot, so two facts about a
daughter never supersede each other. Other languages get no inferred slot (the caller's
``slot=`` or an LLM resolver handles them).
"""

from __future__ import annotations

import re

_WORD = r"[a-z][a-z'-]*"
_ATTRIBUTE = rf"(?P<attr>{_WORD}(?:\s+{_WORD}){{0,3}}?)"
_COPULA = r"(?:is|are|was|were|has become|has changed to|changed to|is now|now is|'s)"
_MY = re.compile(rf"^(?:and\s+|but\s+|so\s+)?my\s+{_ATTRIBUTE}\s+{_COPULA}\s+(?P<value>\S.*)$")
_RELATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("home", re.compile(r"^i\s+(?:now\s+|currently\s+)?(?:live|reside)\s+in\s+\S")),
    ("home", re.compile(r"^i(?:'ve| have)?\s+(?:just\s+)?moved\s+to\s+\S")),
    ("employer", re.compile(r"^i\s+(?:now\s+|currently\s+)?work\s+(?:at|for)\s+\S")),
    ("age", re.compile(r"^i(?:'m| am)\s+(?:now\s+)?\d{1,3}\s+(?:years?\s+old|y/?o)\b")),
    ("name", re.compile(r"^(?:my name is|call me)\s+\S")),
)
_NOT_ATTRIBUTES = frozenset(
    """wife husband partner girlfriend boyfriend fiance fiancee spouse son daughter child
    children kid kids baby mother mom mum father dad parents brother sister sibling siblings
    grandmother grandfather grandma grandpa aunt uncle cousin niece nephew friend friends
    boss manager colleague colleagues coworker team neighbour neighbor doctor teacher
    dog cat pet pets horse bird car house flat apartment office company""".split()  # noqa: SIM905
)
"""People, pets and things: "my daughter is ..." says something of her, not an attribute."""
_VALUE_STARTS = re.compile(r"^(?:\w+ing|called|named|also|still|not|never|always)\b")
_PREFIX = re.compile(r"^(?:actually|now|currently|these days|lately|today)[, ]+")


def _clean(text: str) -> str:
    text = text.strip().lower().replace("\u2019", "'")
    text = re.split(r"[.!?;\n]", text, maxsplit=1)[0].strip()
    return _PREFIX.sub("", text)


def _slot_name(attribute: str) -> str | None:
    words = attribute.split()
    if not words or words[-1] in _NOT_ATTRIBUTES or words[0] in _NOT_ATTRIBUTES:
        return None
    return "_".join(words)


def infer_slot(text: str) -> str | None:
    """The attribute ``text`` gives a value of (``"risk_tolerance"``), or ``None``."""
    clean = _clean(text)
    for name, pattern in _RELATIONS:
        if pattern.search(clean):
            return name
    match = _MY.match(clean)
    if match and not _VALUE_STARTS.match(match.group("value")):
        return _slot_name(match.group("attr"))
    return None


def mentions_slot(text: str, slot: str) -> bool:
    """Whether ``text``, a statement of the user's (first person, not a question), names
    the attribute ``slot`` as a whole phrase."""
    clean = _clean(text)
    if text.strip().endswith("?") or not re.match(r"^(?:i|i'm|i've|my)\b", clean):
        return False
    phrase = r"\s+".join(re.escape(w) for w in slot.split("_"))
    return re.search(rf"\b{phrase}\b", clean) is not None
