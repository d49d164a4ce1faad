"""The lines ``engram import`` reads: one fact per JSON object, checked before anything is
written (an error names its line).

A line holds ``text`` and any of :meth:`engram.Memory.remember`'s arguments:
``slot``, ``tags``, ``source``, ``sensitivity``, ``importance``, ``ttl_seconds``,
``expires_at`` / ``valid_from`` / ``valid_to`` (ISO 8601 with a time zone), ``key``,
``provenance`` (``thread_id``, ``checkpoint_id``, ``message_ids``, ``quote``), and
``user`` (the user, within ``--tenant``). The other fields of an ``engram export`` fact
(``id``, ``namespace``, ``value``, ``recorded_at``, ``superseded_by``) are read and
ignored, but for ``value.slot`` (the slot, when the line gives none). A version's
``valid_to`` is kept, superseded or not (its successor may have expired, or been swept),
but for a superseded version that never held (``valid_to`` at its ``valid_from``): that
end is its successor's line's business, and it is not written without it.
Anything else is an error: a misspelt field must not be dropped.

In an export, a version that LangGraph's ``put`` wrote (no tags), or one below the
user's own namespace, is an :class:`Item`: its namespace (under the importing user), key
and value are restored by ``put``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, get_args

from engram import _validate as check
from engram._principal import Principal
from engram.errors import InvalidInputError
from engram.memory import Observation
from engram.stores.cold import Sensitivity, Source

FIELDS = (
    "text", "user", "key", "slot", "tags", "source", "sensitivity", "importance",
    "ttl_seconds", "expires_at", "valid_from", "valid_to", "provenance",
)  # fmt: skip
"""The fields a line may set."""
EXPORTED = ("id", "namespace", "value", "recorded_at", "superseded_by")
"""Fields of an ``engram export`` fact that a line may hold and that are not set."""
PROVENANCE = ("thread_id", "checkpoint_id", "message_ids", "quote")


@dataclass(frozen=True, slots=True)
class Item:
    """A version an export holds that ``put`` restores: its namespace below the user's,
    key and value; its indexed text (empty: ``index=False``), ttl and expiry."""

    below: tuple[str, ...]
    key: str
    value: dict[str, Any]
    text: str
    ttl: timedelta | None
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class Line:
    """One checked line: where it was (``where``: "line 3", or "fact 3" of an export),
    whose fact it is, and the fact; an exported version's ``id``, and the ``successor``
    it needs written to end it (a superseded version that never held)."""

    number: int
    user: str | None
    fact: Observation | Item
    where: str = ""
    id: str | None = None
    successor: str | None = None


def read_lines(text: str) -> list[Line]:
    """Every fact of ``text`` (JSON Lines, or one ``engram export`` document), checked."""
    document = _export_document(text)
    if document is not None:
        return _export_lines(document)
    return [
        _line(number, raw) for number, raw in enumerate(text.splitlines(), start=1) if raw.strip()
    ]


def exported(lines: list[Line]) -> bool:
    """Whether ``lines`` are an ``engram export``'s facts (named "fact N")."""
    return any(line.where.startswith("fact ") for line in lines)


def _export_document(text: str) -> Mapping[str, Any] | None:
    """``text`` as an ``engram export`` document (one JSON object with ``facts``), if it is."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # (then read line by line, each named)
        return None
    return data if isinstance(data, dict) and isinstance(data.get("facts"), list) else None


def _export_lines(document: Mapping[str, Any]) -> list[Line]:
    """An export's fact versions, oldest first (so each supersedes the one before); they
    name no user: they are ``--user``'s (the exported user, or another one)."""
    facts = [_exported(n, fact) for n, fact in enumerate(document["facts"], start=1)]
    order = {n: str(fact.get("recorded_at")) for n, fact in enumerate(document["facts"], 1)}
    return sorted(facts, key=lambda line: (order[line.number], line.number))


def _line(number: int, raw: str) -> Line:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        why = getattr(exc, "msg", "invalid")
        raise InvalidInputError(f"line {number}: not JSON ({why})") from None
    except RecursionError:
        raise InvalidInputError(f"line {number}: not JSON (nested too deeply)") from None
    return _parsed(number, data, "line")


def _parsed(number: int, data: object, what: str) -> Line:
    try:
        return replace(_checked(number, data), where=f"{what} {number}")
    except InvalidInputError as exc:
        raise InvalidInputError(f"{what} {number}: {exc}") from None


def _exported(number: int, data: object) -> Line:
    """One fact of an export: an :class:`Item` when ``put`` wrote it (no tags) or it lies
    below the user's namespace, a fact otherwise."""
    if not isinstance(data, dict) or (data.get("tags") and len(_labels(data)) <= 2):
        return _parsed(number, data, "fact")
    try:
        return _item(number, data)
    except InvalidInputError as exc:
        raise InvalidInputError(f"fact {number}: {exc}") from None


def _labels(data: Mapping[str, Any]) -> tuple[str, ...]:
    """The exported namespace (none given: the user's)."""
    labels = data.get("namespace", [])
    if not isinstance(labels, list) or len(labels) == 1:
        raise InvalidInputError("namespace must be a list of a tenant, a user and more labels")
    return tuple(check.text("namespace label", label, line=True) for label in labels)


def _item(number: int, data: Mapping[str, Any]) -> Line:
    unknown = sorted(set(data) - set(FIELDS) - set(EXPORTED))
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    value = check.mapping("value", data.get("value"))
    if value is None:
        raise InvalidInputError("no value")
    check.storable("value", value)
    get = _Reader(data)
    item = Item(
        _labels(data)[2:],
        check.text("key", data.get("key"), line=True),
        dict(value),
        check.text("text", data.get("text", ""), blank=True),
        get.seconds("ttl_seconds"),
        get.moment("expires_at"),
    )
    return Line(number, None, item, f"fact {number}", get.optional("id"))


def _checked(number: int, data: object) -> Line:
    if not isinstance(data, dict):
        raise InvalidInputError(f"a fact is a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS) - set(EXPORTED))
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    if "text" not in data:
        raise InvalidInputError("no text")
    get = _Reader(data)
    provenance = get.provenance()
    valid_from, valid_to = get.moment("valid_from"), get.moment("valid_to")
    successor = get.optional("superseded_by")
    never_held = valid_to is not None and valid_from is not None and valid_to <= valid_from
    if successor is None or not never_held:
        successor = None
    else:
        valid_to = None
    fact = Observation(
        check.text("text", data["text"]),
        get.optional("slot") or get.exported_slot(),
        check.texts("tags", data.get("tags", ["fact"])),
        check.choice("source", data.get("source", "user"), get_args(Source)),
        check.choice("sensitivity", data.get("sensitivity", "normal"), get_args(Sensitivity)),
        check.number("importance", data.get("importance", 0.5), low=0.0, high=1.0),
        get.seconds("ttl_seconds"),
        *provenance,
        key=get.optional("key"),
        valid_from=valid_from,
        valid_to=valid_to,
        expires_at=get.moment("expires_at"),
    )
    if fact.valid_to is not None and (fact.valid_from is None or fact.valid_to <= fact.valid_from):
        raise InvalidInputError("valid_to needs a valid_from before it")
    user = get.optional("user")
    return Line(number, user, fact, id=get.optional("id"), successor=successor)


@dataclass(frozen=True, slots=True)
class _Reader:
    """Typed reads of one line's optional fields."""

    data: Mapping[str, Any]

    def optional(self, name: str) -> str | None:
        return check.optional_text(name, self.data.get(name))

    def exported_slot(self) -> str | None:
        value = self.data.get("value")
        slot = value.get("slot") if isinstance(value, dict) else None
        return check.optional_text("value.slot", slot)

    def moment(self, name: str) -> datetime | None:
        return _moment(name, self.data.get(name))

    def seconds(self, name: str) -> timedelta | None:
        value = self.data.get(name)
        if value is None:
            return None
        return check.span(name, value, "seconds")

    def provenance(self) -> tuple[str | None, str | None, tuple[str, ...], str | None]:
        given = self.data.get("provenance") or {}
        if not isinstance(given, dict):
            raise InvalidInputError("provenance must be a JSON object")
        unknown = sorted(set(given) - set(PROVENANCE))
        if unknown:
            known = ", ".join(PROVENANCE)
            raise InvalidInputError(f"unknown provenance field {unknown[0]!r} (known: {known})")
        return (
            check.optional_text("thread_id", given.get("thread_id")),
            check.optional_text("checkpoint_id", given.get("checkpoint_id")),
            check.texts("message_ids", given.get("message_ids", [])),
            check.optional_text("quote", given.get("quote"), line=False),
        )


def _moment(name: str, value: object) -> datetime | None:
    """An ISO 8601 time with its zone (a time without one could mean any)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be an ISO 8601 string, got {type(value).__name__}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(f"{name} is not an ISO 8601 time: {value[:40]!r}") from None
    if moment.tzinfo is None:
        raise InvalidInputError(f"{name} {value[:40]!r} has no time zone (add Z or +00:00)")
    return moment


def runs(
    lines: list[Line], tenant: str, user: str | None
) -> Iterator[tuple[Principal, list[Line]]]:
    """Consecutive lines of one user, in order (``user`` for lines that name none)."""
    current: tuple[Principal, list[Line]] | None = None
    for line in lines:
        who = _principal(line, tenant, user)
        if current is None or current[0] != who:
            if current is not None:
                yield current
            current = (who, [])
        current[1].append(line)
    if current is not None:
        yield current


def _principal(line: Line, tenant: str, user: str | None) -> Principal:
    who = line.user or user
    if who is None:
        raise InvalidInputError(f"line {line.number}: no user (give --user or a user field)")
    try:
        return Principal(tenant, who)
    except InvalidInputError as exc:
        raise InvalidInputError(f"line {line.number}: {exc}") from None
