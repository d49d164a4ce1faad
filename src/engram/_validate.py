"""Argument checks shared by the public entry points.

Each returns the value it was given (or its normal form) and raises
:class:`~engram.errors.InvalidInputError` with a one-line message otherwise, before
anything is read or written: a refused call changes nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from engram._principal import Principal
from engram.errors import InvalidInputError

T = TypeVar("T")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""C0 controls and DEL, but tab, newline and carriage return, which text may hold."""
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _show(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def principal(value: object) -> Principal:
    """``value`` if it is a :class:`Principal` (never a tenant string or a tuple)."""
    if not isinstance(value, Principal):
        raise InvalidInputError(f"a Principal is required, got {type(value).__name__}")
    return value


def text(name: str, value: object, *, blank: bool = False, line: bool = False) -> str:
    """A string of valid Unicode (no lone surrogates), without NUL or other control
    characters (``line``: without tab or newline either); empty only when ``blank``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    unicode(name, value)
    if (_ANY_CONTROL if line else _CONTROL).search(value):
        raise InvalidInputError(f"{name} holds a control character: {_show(value)}")
    if not blank and not value.strip():
        raise InvalidInputError(f"{name} must not be empty")
    return value


def unicode(name: str, value: str) -> str:
    """``value`` if it is valid Unicode (no lone surrogate, which no backend stores)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{name} is not valid Unicode (a lone surrogate)") from None
    return value


def optional_text(name: str, value: object, *, line: bool = True) -> str | None:
    return None if value is None else text(name, value, line=line)


def texts(name: str, value: object) -> tuple[str, ...]:
    """A sequence of strings, each a one-line :func:`text` (a lone string is refused: it
    would read as its characters)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | Collection):
        raise InvalidInputError(f"{name} must be a list of strings, got {type(value).__name__}")
    return tuple(text(f"{name} item", item, line=True) for item in value)


def optional_texts(name: str, value: object) -> tuple[str, ...] | None:
    return None if value is None else texts(name, value)


MAX_COUNT = 2**31 - 1
"""The largest count, limit or offset engram takes (what every engine can bind)."""


def integer(name: str, value: object, *, minimum: int, maximum: int = MAX_COUNT) -> int:
    """An ``int`` (not a bool, not a float, not a numeric string) in ``[minimum, maximum]``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInputError(f"{name} must be an integer, got {type(value).__name__}")
    if not minimum <= value <= maximum:
        raise InvalidInputError(f"{name} must be within [{minimum}, {maximum}], got {value}")
    return value


def number(name: str, value: object, *, low: float | None = None, high: float | None = None
           ) -> float:
    """A finite real number within ``[low, high]`` when given."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise InvalidInputError(f"{name} must be a finite number, got {_show(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise InvalidInputError(f"{name} must be within [{low}, {high}], got {value}")
    return float(value)


def moment(name: str, value: object) -> datetime | None:
    """A ``datetime`` or ``None`` (a date string is refused: say which zone it means)."""
    if value is not None and not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime, got {type(value).__name__}")
    return value


def duration(name: str, value: object) -> timedelta | None:
    if value is not None and (not isinstance(value, timedelta) or value <= timedelta(0)):
        raise InvalidInputError(f"{name} must be a positive timedelta, got {_show(value)}")
    return value


def flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {_show(value)}")
    return value


def mapping(name: str, value: object) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise InvalidInputError(f"{name} must be a mapping, got {type(value).__name__}")
    return value


def storable(name: str, value: object, *, depth: int = 0) -> None:
    """Raise :class:`InvalidInputError` unless every string in ``value`` (a stored value:
    mappings, lists and scalars), keys included, is valid Unicode without NUL: one that
    is not would be stored by one backend, refused by another and matched by none."""
    if depth > 64:
        raise InvalidInputError(f"{name} nests deeper than 64 levels")
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInputError(f"{name} holds a NUL character: {_show(value)}")
        unicode(name, value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            storable(name, key, depth=depth + 1)
            storable(f"{name}.{key}", item, depth=depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            storable(name, item, depth=depth + 1)


def choice(name: str, value: T, options: Collection[T]) -> T:
    if value not in options:
        known = ", ".join(sorted(str(o) for o in options))
        raise InvalidInputError(f"{name} must be one of {known}; got {_show(value)}")
    return value


def instance(name: str, value: object, kind: type[T]) -> T | None:
    if value is not None and not isinstance(value, kind):
        raise InvalidInputError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value
