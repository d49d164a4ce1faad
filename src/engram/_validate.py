"""Argument checks shared by the public entry points.

Each returns the value it was given (or its normal form) and raises
:class:`~engram.errors.InvalidInputError` with a one-line message otherwise, before
anything is read or written: a refused call changes nothing.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from engram._principal import Principal
from engram.errors import InvalidInputError

T = TypeVar("T")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""C0 controls and DEL, but tab, newline and carriage return, which text may hold."""
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(value: object) -> str:
    """``value`` as an error message echoes it: its ``repr``, cut to 60 characters."""
    if isinstance(value, int) and value.bit_length() > 192:  # (str() refuses 4,300 digits)
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
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
        raise InvalidInputError(f"{name} holds a control character: {shown(value)}")
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
        raise InvalidInputError(f"{name} must be within [{minimum}, {maximum}], got {shown(value)}")
    return value


def number(
    name: str, value: object, *, low: float | None = None, high: float | None = None
) -> float:
    """A finite real number within ``[low, high]`` when given (an ``int`` past the largest
    float is no finite number: it has no float)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not _finite(value):
        raise InvalidInputError(f"{name} must be a finite number, got {shown(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise InvalidInputError(f"{name} must be within [{low}, {high}], got {value}")
    return float(value)


def _finite(value: float) -> bool:
    if isinstance(value, int):
        return -sys.float_info.max <= value <= sys.float_info.max
    return math.isfinite(value)


LARGEST_INTEGER = 2**53
"""The largest integer (in magnitude) a stored value or a filter holds: every backend
compares integers up to it exactly, and Qdrant compares numbers as floats, which hold
every integer up to 2**53 but not 2**53 + 1."""


def exact_integer(name: str, value: int) -> int:
    """``value`` if it lies within ±:data:`LARGEST_INTEGER`."""
    if not -LARGEST_INTEGER <= value <= LARGEST_INTEGER:
        raise InvalidInputError(
            f"{name} must be an integer within ±2**53 (not every backend compares a larger "
            f"one exactly: store it as a string or a float), got {shown(value)}"
        )
    return value


FIRST_MOMENT = datetime.min.replace(tzinfo=UTC)
LAST_MOMENT = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
"""The last moment engram stores, a second before the last ``datetime``: SQLite and Qdrant
keep epoch seconds as floats, 15 µs apart in year 9999, so ``datetime.max`` would read
back as year 10000, which no ``datetime`` holds."""
LONGEST = timedelta(days=1000 * 365)
"""The longest ``ttl``: a thousand years (what is meant for longer is no expiry), so that
``now + ttl`` stays before :data:`LAST_MOMENT`."""


def moment(name: str, value: object) -> datetime | None:
    """A ``datetime`` or ``None`` (a date string is refused: say which zone it means),
    from :data:`FIRST_MOMENT` to :data:`LAST_MOMENT` (a naive one read as UTC), so every
    backend stores it and reads it back."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime, got {type(value).__name__}")
    aware = value if value.utcoffset() is not None else value.replace(tzinfo=UTC)
    if not FIRST_MOMENT <= aware <= LAST_MOMENT:  # (aware datetimes compare without overflow)
        raise InvalidInputError(
            f"{name} must be from {FIRST_MOMENT.isoformat()} to {LAST_MOMENT.isoformat()}, "
            f"got {value.isoformat()}"
        )
    return value


def duration(name: str, value: object) -> timedelta | None:
    """A positive ``timedelta`` of at most :data:`LONGEST`, or ``None``."""
    if value is not None and (not isinstance(value, timedelta) or value <= timedelta(0)):
        raise InvalidInputError(f"{name} must be a positive timedelta, got {shown(value)}")
    if value is not None and value > LONGEST:
        raise InvalidInputError(f"{name} must be at most {LONGEST.days} days, got {value}")
    return value


def span(name: str, amount: object, unit: str) -> timedelta:
    """``amount`` of ``unit`` (``"seconds"``, ``"minutes"``) as a :func:`duration`: a
    positive finite number no longer than :data:`LONGEST` (a huge one would overflow
    ``timedelta`` itself)."""
    count = number(name, amount, low=0.0)
    if count > LONGEST / timedelta(**{unit: 1}):
        raise InvalidInputError(f"{name} must be at most {LONGEST.days} days, got {count} {unit}")
    length = timedelta(**{unit: count})
    duration(name, length)
    return length


def flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {shown(value)}")
    return value


def mapping(name: str, value: object) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise InvalidInputError(f"{name} must be a mapping, got {type(value).__name__}")
    return value


def storable(name: str, value: object, *, depth: int = 0) -> None:
    """Raise :class:`InvalidInputError` unless ``value`` (a stored value) is JSON that every
    backend stores and reads back alike: objects with string keys (any mapping as the
    value itself, dicts inside it), lists (or tuples), strings of valid Unicode without NUL,
    finite floats, integers within ±2**53 (:data:`LARGEST_INTEGER`), booleans and ``None``.
    Anything else (bytes, a set, ``NaN``, an object, a larger integer) would be kept by one
    backend, refused by another, or compared differently by a third."""
    if depth > 64:
        raise InvalidInputError(f"{name} nests deeper than 64 levels")
    if isinstance(value, str):
        stored_text(name, value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInputError(f"{name} must be a finite number, got {value!r}")
    elif isinstance(value, int) and not isinstance(value, bool):
        exact_integer(name, value)
    elif isinstance(value, dict) or (depth == 0 and isinstance(value, Mapping)):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInputError(f"{name} has a key that is not a string: {shown(key)}")
            stored_text(name, key)
            storable(f"{name}.{key}", item, depth=depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            storable(name, item, depth=depth + 1)
    elif not (value is None or isinstance(value, int | float)):  # (a bool is an int)
        raise InvalidInputError(
            f"{name} must hold JSON only (objects, lists, strings, numbers, true, false, "
            f"null), got {type(value).__name__}"
        )


def stored_text(name: str, value: str) -> None:
    """Refuse a string no backend stores alike: one holding NUL or a lone surrogate."""
    if "\x00" in value:
        raise InvalidInputError(f"{name} holds a NUL character: {shown(value)}")
    unicode(name, value)


def choice(name: str, value: T, options: Collection[T]) -> T:
    if value not in options:
        known = ", ".join(sorted(str(o) for o in options))
        raise InvalidInputError(f"{name} must be one of {known}; got {shown(value)}")
    return value


def instance(name: str, value: object, kind: type[T]) -> T | None:
    if value is not None and not isinstance(value, kind):
        raise InvalidInputError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value
