"""The one filter contract of the cold tier, as pure functions.

A filter maps a field path to a value (shorthand for ``$eq``) or to an operator
dict: ``{"lang": "en", "stars": {"$gte": 3}, "meta.kind": {"$in": ["a", "b"]}}``.

Rules (identical on every backend; the conformance suite pins them):

- Operators: ``$eq $ne $gt $gte $lt $lte $in``. Several operators on one field are ANDed.
- A path with dots walks nested objects: ``"meta.kind"`` reads ``value["meta"]["kind"]``.
  A field name holds no double quote, backslash or control character (SQLite's JSON
  paths cannot name such a key), and no lone surrogate.
- A missing field (or a path through a non-object) matches **no** operator, ``$ne`` included.
- Operands are scalars: str, int, float, bool or ``None`` (``$in`` takes a list of them);
  no lone surrogate in a string, no NaN, infinity or integer past the largest float (no
  stored value holds one, and engines would order it differently).
  Numbers (int and float) compare as numbers; strings compare by code point;
  a number never equals a string (``1`` vs ``"1"``) and a bool is not a number.
- ``$gt $gte $lt $lte`` need a number or a string and match only fields of the same kind.
- ``$eq None`` matches a JSON ``null``; ``$ne x`` matches any present field not equal to x.
- Lists and objects in stored values never match a scalar operand.

:func:`parse_filter` validates a filter into :class:`Condition` s; :func:`matches`
evaluates them in Python; :func:`compile_filter` turns them into SQL through a
:class:`FilterDialect` (each SQL backend supplies one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from engram import _validate as check
from engram.errors import InvalidInputError

Scalar = str | int | float | bool | None
Kind = Literal["number", "string", "true", "false", "null"]
Fragment = tuple[str, tuple[object, ...]]
"""A piece of SQL and its parameters."""

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in")
SQL_OPERATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Condition:
    """One validated test: ``path`` (split on dots), operator and operand."""

    path: tuple[str, ...]
    op: str
    operand: Scalar | tuple[Scalar, ...]


def kind_of(value: object) -> Kind | None:
    """The JSON kind of a scalar, or ``None`` for lists, objects and other types."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _check_operand(path: str, op: str, operand: object) -> Scalar | tuple[Scalar, ...]:
    if op == "$in":
        if not isinstance(operand, list | tuple) or not operand:
            raise InvalidInputError(f"$in on {path!r} needs a non-empty list")
        return tuple(_check_operand(path, "$eq", item) for item in operand)  # type: ignore[misc]
    kind = kind_of(operand)
    if kind is None:
        raise InvalidInputError(f"filter operand for {path!r} must be a scalar, got {operand!r}")
    if op in SQL_OPERATORS and kind not in ("number", "string"):
        raise InvalidInputError(f"{op} on {path!r} needs a number or a string, got {operand!r}")
    if isinstance(operand, str):
        check.unicode(f"filter operand for {path!r}", operand)
    if isinstance(operand, int) and not isinstance(operand, bool):
        # (as stored values are: no backend could compare a larger one alike)
        check.exact_integer(f"filter operand for {path!r}", operand)
    if isinstance(operand, float) and not math.isfinite(operand):
        raise InvalidInputError(f"filter operand for {path!r} must be finite, got {operand!r}")
    return operand  # type: ignore[return-value]


_UNREADABLE = re.compile(r'["\\\x00-\x1f]')
"""What a field name may not hold: SQLite's JSON paths cannot name a key with a double
quote or a backslash, nor match one that JSON escapes (control characters)."""


def _split_path(path: object) -> tuple[str, ...]:
    if not isinstance(path, str) or not path or any(not p for p in path.split(".")):
        raise InvalidInputError(f"bad filter field {path!r}")
    check.unicode(f"filter field {path!r}", path)
    if _UNREADABLE.search(path):
        raise InvalidInputError(
            f"filter field {path!r} holds a quote, a backslash or a control character"
        )
    return tuple(path.split("."))


def parse_filter(filter_: Mapping[str, Any] | None) -> tuple[Condition, ...]:
    """Validate ``filter_`` into conditions, or raise :class:`InvalidInputError`."""
    if not filter_:
        return ()
    if not isinstance(filter_, Mapping):
        raise InvalidInputError(f"a filter must be a mapping, got {type(filter_).__name__}")
    out: list[Condition] = []
    for path, spec in filter_.items():
        parts = _split_path(path)
        ops = spec if isinstance(spec, Mapping) else {"$eq": spec}
        if not ops:
            raise InvalidInputError(f"empty operator dict for {path!r}")
        for op, operand in ops.items():
            if op not in OPERATORS:
                raise InvalidInputError(f"unknown filter operator {op!r}; known: {OPERATORS}")
            out.append(Condition(parts, op, _check_operand(path, op, operand)))
    return tuple(out)


def lookup(value: Mapping[str, Any], path: Sequence[str]) -> object:
    """The value at ``path`` in nested mappings, or a private missing marker."""
    current: object = value
    for part in path:
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _equal(field: object, operand: Scalar) -> bool:
    kind = kind_of(field)
    return kind is not None and kind == kind_of(operand) and field == operand


def _holds(field: object, cond: Condition) -> bool:
    if field is _MISSING:
        return False
    if cond.op == "$eq":
        return _equal(field, cond.operand)  # type: ignore[arg-type]
    if cond.op == "$ne":
        return not _equal(field, cond.operand)  # type: ignore[arg-type]
    if cond.op == "$in":
        return any(_equal(field, item) for item in cond.operand)  # type: ignore[union-attr]
    kind = kind_of(cond.operand)
    if kind_of(field) != kind:
        return False
    left: Any = field
    right: Any = cond.operand
    outcome: bool = {
        "$gt": left > right,
        "$gte": left >= right,
        "$lt": left < right,
        "$lte": left <= right,
    }[cond.op]
    return outcome


def matches(conditions: Sequence[Condition], value: Mapping[str, Any]) -> bool:
    """Whether ``value`` satisfies every condition (the reference semantics)."""
    return all(_holds(lookup(value, c.path), c) for c in conditions)


class FilterDialect(Protocol):
    """How one SQL engine reads a JSON field; :func:`compile_filter` does the rest.

    Each method returns SQL text plus parameters for the value column's field at
    ``path``. Use the engine's placeholder style in the SQL (``?`` or ``%s``).
    """

    def is_kind(self, path: tuple[str, ...], kind: Kind) -> Fragment:
        """True when the field exists and has JSON kind ``kind``."""
        ...

    def present(self, path: tuple[str, ...]) -> Fragment:
        """True when the field exists (any kind, ``null`` included)."""
        ...

    def compare(self, path: tuple[str, ...], kind: Kind, sql_op: str, operand: Scalar) -> Fragment:
        """The field read as ``kind`` (number or string) compared to ``operand`` with ``sql_op``.

        Strings must compare by code point (SQLite BINARY, PostgreSQL ``COLLATE "C"``).
        """
        ...


def _and(*parts: Fragment) -> Fragment:
    return "(" + " AND ".join(p[0] for p in parts) + ")", sum((p[1] for p in parts), ())


def _eq_sql(dialect: FilterDialect, path: tuple[str, ...], operand: Scalar) -> Fragment:
    kind = kind_of(operand)
    assert kind is not None
    if kind in ("number", "string"):
        return _and(dialect.is_kind(path, kind), dialect.compare(path, kind, "=", operand))
    return dialect.is_kind(path, kind)


def _condition_sql(dialect: FilterDialect, cond: Condition) -> Fragment:
    if cond.op == "$eq":
        return _eq_sql(dialect, cond.path, cond.operand)  # type: ignore[arg-type]
    if cond.op == "$ne":
        sql, params = _eq_sql(dialect, cond.path, cond.operand)  # type: ignore[arg-type]
        return _and(dialect.present(cond.path), (f"NOT {sql}", params))
    if cond.op == "$in":
        parts = [_eq_sql(dialect, cond.path, item) for item in cond.operand]  # type: ignore[union-attr]
        return "(" + " OR ".join(p[0] for p in parts) + ")", sum((p[1] for p in parts), ())
    kind = kind_of(cond.operand)
    assert kind is not None
    compare = dialect.compare(cond.path, kind, SQL_OPERATORS[cond.op], cond.operand)  # type: ignore[arg-type]
    return _and(dialect.is_kind(cond.path, kind), compare)


def compile_filter(conditions: Sequence[Condition], dialect: FilterDialect) -> Fragment:
    """SQL (``TRUE``-equivalent ``1=1`` when empty) for all ``conditions`` ANDed."""
    if not conditions:
        return "1=1", ()
    return _and(*(_condition_sql(dialect, c) for c in conditions))
