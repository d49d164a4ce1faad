"""Texts a pattern cannot match without: a cheap test before a costly regex (pure).

:func:`needed` reads a pattern's syntax tree and returns a set of strings, case-folded,
such that every match of the pattern contains one of them (``None`` when it knows no
such set: the pattern is then always tried). A text whose case-folded form contains
none of them cannot match, so the pattern is skipped with the same verdict: most facts
never reach the intent patterns' regex engine. The tree is the standard library's
parser's (the ``regex`` module's property classes, ``\\p{..}``, stood in by a class
the parser knows: classes are never needed text).

The rules, for a sequence of items: each run of literal characters is needed (zero-
width assertions do not break a run: what they stand between is adjacent in the
text); a group is needed as its inside is; an alternation needs the union of what its
branches need (nothing, if one branch needs nothing); a repeat needs what its body
needs when it repeats at least once. Of the needed sets of a sequence, the one with
the longest shortest string is kept (fewest strings on a tie).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

_parser: Any = importlib.import_module("re._parser")
"""The standard library's pattern parser (``sre_parse`` before Python 3.11)."""
_PROPERTY = re.compile(r"(?<!\\)\\[pP]\{[^}]*\}")
_LOOSE = str.maketrans({"\u0131": "i", "\u0307": None})
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_ZERO_WIDTH = frozenset({"AT", "ASSERT", "ASSERT_NOT"})

Needed = frozenset[str] | None


def needed(source: str) -> Needed:
    """Case-folded strings one of which every match of ``source`` contains, or ``None``."""
    try:
        tree = _parser.parse(_PROPERTY.sub(r"\\d", source), re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        return None
    found = _sequence(tree)
    if found is None or not all(found):
        return None
    return frozenset(fold(s) for s in found)


def fold(text: str) -> str:
    """``text`` case-folded, a little looser than :meth:`str.casefold`: wherever the
    ``regex`` module's case-insensitive matching finds a literal, the folded text holds
    the folded literal (it also takes a capital I for a dotless i, and a dotted capital
    I for a plain i: the dot above is dropped)."""
    return text.casefold().translate(_LOOSE)


def _sequence(items: Iterable[tuple[Any, Any]]) -> Needed:
    options: list[frozenset[str]] = []
    run = ""
    for op, arg in items:
        name = _name(op)
        if name == "LITERAL":
            run += chr(arg)
            continue
        if name in _ZERO_WIDTH:
            continue
        if run:
            options.append(frozenset({run}))
            run = ""
        if (inner := _item(name, arg)) is not None:
            options.append(inner)
    if run:
        options.append(frozenset({run}))
    return max(options, key=_score, default=None)


def _item(name: str, arg: Any) -> Needed:
    if name == "SUBPATTERN":
        return _sequence(arg[-1])
    if name == "ATOMIC_GROUP":
        return _sequence(arg)
    if name == "BRANCH":
        return _union([_sequence(branch) for branch in arg[1]])
    if name in _REPEATS:
        low, _, body = arg
        return _sequence(body) if low >= 1 else None
    return None


def _union(branches: Sequence[Needed]) -> Needed:
    if any(b is None for b in branches):
        return None
    return frozenset(s for b in branches if b is not None for s in b)


def _score(option: frozenset[str]) -> tuple[int, int]:
    return min(map(len, option)), -len(option)


def _name(op: object) -> str:
    return str(getattr(op, "name", op))
