"""Records as Qdrant points, and the cold tier's rules as Qdrant filters (pure, no I/O).

A version is one point (id: a UUID derived from the version id) whose payload holds

- the record itself: ``rec`` (a JSON string of its immutable fields, so numbers and key
  order survive every transport) and the fields that change: ``vt`` (valid_to), ``sb``
  (superseded_by), ``ex`` (expires_at), ``model``;
- what searches filter on, each with a payload index: ``tenant`` (the namespace's
  first label, an ``is_tenant`` keyword index), ``ns`` (the joined namespace), ``nsp``
  (every leading part of it: a prefix match is one keyword match), ``key``, ``head``
  (1: no successor), ``opens`` / ``closes`` / ``expires`` (epoch seconds; a bound that
  never comes is :data:`NEVER`), ``tags``, ``text`` (whether it has text);
- the value's scalar fields by kind, for :mod:`engram.recall.filters`: ``s`` strings,
  ``n`` numbers, ``b`` booleans (as 0 and 1: Qdrant Edge matches no boolean), ``z`` the
  paths holding ``null``, ``p`` every present path. A path is a key of hex-encoded
  labels (``k6d_78`` for ``m.x``), so any label is safe in Qdrant's key syntax, and
  lists are never entered: a list or an object never equals a scalar, exactly as the
  filter contract says;
- ``ends`` (records only): the closures the write that stored the version makes,
  ``[replaced id, its end]`` pairs, so a write a crash interrupts can be finished
  (:mod:`~engram.backends.qdrant._repair`).

Qdrant has no order on strings, so ``$gt``/``$gte``/``$lt``/``$lte`` with a string
operand are left out of the pushed-down filter: :func:`split_conditions` returns them
for the caller to evaluate with :func:`engram.recall.filters.matches` over the
pre-filtered selection (the ids it admits then join the search as a ``has_id``
condition, so a search still returns ``k`` results).
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from qdrant_client import models

from engram.recall import index_words, keyword_terms, stem
from engram.recall.filters import SQL_OPERATORS, Condition, kind_of
from engram.stores.cold.contract import Scan
from engram.stores.cold.records import (
    MemoryRecord,
    Namespace,
    Provenance,
    View,
    from_epoch,
    join_namespace,
    split_namespace,
    to_epoch,
)

NEVER = 1e18
"""The epoch bound of a validity or expiry that never ends (year ~3e10)."""

KEYWORDS = "keywords"
"""The sparse vector of a version's text (BM25 term weights; Qdrant applies the IDF)."""

DENSE = "dense"
"""The dense vector's name in each ``<collection>_dense_<dim>`` collection."""

K1 = 1.2
B = 0.75
AVG_WORDS = 256.0
"""BM25's reference document length. Qdrant's own BM25 (FastEmbed ``Bm25``) fixes it
(``avg_len=256``) because a point's weights are written once, before the corpus mean is
known; this backend takes the same default instead of a value fitted to some data."""

_ID_SPACE = uuid.UUID("8f6e7c44-31a5-4c53-9a53-0a6f1e0c0d21")
_MAX_INT = 2**63

FILTER_FIELDS: tuple[tuple[str, models.PayloadSchemaType | models.KeywordIndexParams], ...] = (
    ("tenant", models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)),
    ("ns", models.PayloadSchemaType.KEYWORD),
    ("nsp", models.PayloadSchemaType.KEYWORD),
    ("key", models.PayloadSchemaType.KEYWORD),
    ("id", models.PayloadSchemaType.KEYWORD),
    ("head", models.PayloadSchemaType.INTEGER),
    ("text", models.PayloadSchemaType.INTEGER),
    ("opens", models.PayloadSchemaType.FLOAT),
    ("closes", models.PayloadSchemaType.FLOAT),
    ("expires", models.PayloadSchemaType.FLOAT),
    ("tags", models.PayloadSchemaType.KEYWORD),
    ("model", models.PayloadSchemaType.KEYWORD),
    ("p", models.PayloadSchemaType.KEYWORD),
)
"""Payload indexes of every collection (tenant first: Qdrant co-locates a tenant's points)."""


def point_id(version_id: str) -> str:
    """The point id of a version: a UUID derived from its id (Qdrant ids are UUIDs or ints)."""
    return str(uuid.uuid5(_ID_SPACE, version_id))


# -- records <-> payloads --------------------------------------------------------------


def _bound(moment: datetime | None) -> float:
    epoch = to_epoch(moment)
    return NEVER if epoch is None else epoch


KEYWORD_FORMAT_FIELD = "kwf"
KEYWORD_FORMAT = 2
"""What a point's sparse vector holds: format 2, the words and their stems. A point
without the field was written before stems (its words only); setup writes it again."""
KEYWORD_FORMAT_INDEX = (KEYWORD_FORMAT_FIELD, models.PayloadSchemaType.INTEGER)


def rekeyed(point_id: Any, found: dict[str, Any]) -> models.PointStruct:
    """The point ``point_id`` with payload ``found`` as written now: its sparse vector
    from its text again, its payload unchanged but for the keyword format."""
    keywords = document_vector(json.loads(found["rec"])["text"])
    return models.PointStruct(
        id=point_id,
        vector={} if keywords is None else {KEYWORDS: keywords},
        payload={**found, KEYWORD_FORMAT_FIELD: KEYWORD_FORMAT},
    )


ENDS = "ends"
MUTABLE = ("vt", "sb", "head", "closes", "ex", "expires", "model")
"""The payload fields that change after a version is stored (its dense copy has them)."""


def payload(
    record: MemoryRecord, embedded: bool, ends: Sequence[tuple[str, float | None]] = ()
) -> dict[str, Any]:
    """The whole payload of ``record``'s point (``embedded``: a vector is stored with it;
    ``ends``: the versions its write closes, with their ends)."""
    immutable = {
        "value": dict(record.value),
        "text": record.text,
        "tags": list(record.tags),
        "source": record.source,
        "sensitivity": record.sensitivity,
        "importance": record.importance,
        "created_at": to_epoch(record.created_at),
        "recorded_at": to_epoch(record.recorded_at),
        "valid_from": to_epoch(record.valid_from),
        "ttl_s": record.ttl_seconds,
        "provenance": record.provenance.to_json(),
    }
    return {
        "rec": json.dumps(immutable, ensure_ascii=False, sort_keys=True),
        KEYWORD_FORMAT_FIELD: KEYWORD_FORMAT,
        **filter_payload(record, embedded),
        **({ENDS: [[old, end] for old, end in ends]} if ends else {}),
    }


def filter_payload(record: MemoryRecord, embedded: bool) -> dict[str, Any]:
    """What searches filter on (the dense collections hold only this)."""
    recorded, valid_from = to_epoch(record.recorded_at), to_epoch(record.valid_from)
    assert recorded is not None and valid_from is not None
    labels = record.namespace
    return {
        "id": record.id,
        "tenant": labels[0],
        "ns": join_namespace(labels),
        "nsp": [join_namespace(labels[:i]) for i in range(1, len(labels) + 1)],
        "key": record.key,
        "text": int(bool(record.text)),
        "opens": max(recorded, valid_from),
        "recorded": recorded,
        "tags": list(record.tags),
        **closing(record.valid_to, record.superseded_by),
        **expiring(record.expires_at),
        "model": record.embedding_model if embedded else None,
        **value_fields(record.value),
    }


def closing(valid_to: datetime | None, superseded_by: str | None) -> dict[str, Any]:
    """The payload change that ends (or not) a version's validity."""
    return closing_epoch(to_epoch(valid_to), superseded_by)


def closing_epoch(valid_to: float | None, superseded_by: str | None) -> dict[str, Any]:
    """:func:`closing` of an end in epoch seconds."""
    return {
        "vt": valid_to,
        "sb": superseded_by,
        "head": int(superseded_by is None),
        "closes": NEVER if valid_to is None else valid_to,
    }


def opened() -> dict[str, Any]:
    """The payload change that makes a version current and valid again."""
    return closing_epoch(None, None)


def expiring(expires_at: datetime | None) -> dict[str, Any]:
    """The payload change that sets a version's expiry."""
    return {"ex": to_epoch(expires_at), "expires": _bound(expires_at)}


def record(data: Mapping[str, Any]) -> MemoryRecord:
    """The record a point's payload holds."""
    fixed = json.loads(data["rec"])
    return MemoryRecord(
        id=data["id"],
        namespace=split_namespace(data["ns"]),
        key=data["key"],
        value=fixed["value"],
        text=fixed["text"],
        tags=tuple(fixed["tags"]),
        source=fixed["source"],
        sensitivity=fixed["sensitivity"],
        importance=fixed["importance"],
        created_at=_moment(fixed["created_at"]),
        recorded_at=_moment(fixed["recorded_at"]),
        valid_from=_moment(fixed["valid_from"]),
        valid_to=from_epoch(data.get("vt")),
        expires_at=from_epoch(data.get("ex")),
        ttl_seconds=fixed["ttl_s"],
        provenance=Provenance.from_json(fixed["provenance"]),
        superseded_by=data.get("sb"),
        embedding_model=data.get("model"),
    )


def _moment(seconds: float) -> datetime:
    moment = from_epoch(seconds)
    assert moment is not None
    return moment


# -- the value's fields ----------------------------------------------------------------


def path_key(path: Sequence[str]) -> str:
    """The payload key of a value path: ``k`` + its labels hex-encoded, joined by ``_``."""
    return "k" + "_".join(label.encode("utf-8", "surrogatepass").hex() for label in path)


def _leaves(value: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    for label, item in value.items():
        here = (*path, str(label))
        yield path_key(here), item
        if isinstance(item, Mapping):
            yield from _leaves(item, here)


def value_fields(value: Mapping[str, Any]) -> dict[str, Any]:
    """``s`` / ``n`` / ``b`` / ``z`` / ``p``: the value's scalars by kind, and its paths."""
    typed: dict[str, dict[str, Any]] = {"s": {}, "n": {}, "b": {}}
    nulls: list[str] = []
    present: list[str] = []
    for key, item in _leaves(value):
        present.append(key)
        kind = kind_of(item)
        if kind == "string":
            typed["s"][key] = item
        elif kind == "number" and _finite(item):
            typed["n"][key] = item
        elif kind == "number" and isinstance(item, int) and abs(item) < 2**1023:
            typed["n"][key] = float(item)  # (past 64 bits: compared as the number it is)
        elif kind in ("true", "false"):
            typed["b"][key] = int(item)
        elif kind == "null":
            nulls.append(key)
    return {**typed, "z": nulls, "p": present}


def _finite(number: float) -> bool:
    if isinstance(number, int):
        return -_MAX_INT < number < _MAX_INT
    return math.isfinite(number)


# -- keyword vectors -------------------------------------------------------------------


def term_index(term: str) -> int:
    """A term's sparse-vector dimension: 32 bits of its BLAKE2b digest."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "little")


STEM = "\x00"
"""What a stem's term starts with (a word and a stem spelt alike stay two terms)."""


def document_vector(text: str) -> models.SparseVector | None:
    """BM25 term weights of ``text``'s indexed words (engram's shared tokenisation) and of
    their stems: an inflected query word finds the text through its stem, and the word
    as written scores twice. (Points written before stems were added are written again
    at setup: :func:`rekeyed`.)"""
    found = index_words(text)
    if not found:
        return None
    counts: Counter[int] = Counter(term_index(w) for w in found)
    counts.update(term_index(STEM + stem(w)) for w in found)
    norm = K1 * (1 - B + B * len(found) / AVG_WORDS)
    indices = sorted(counts)
    weights = [counts[i] * (K1 + 1) / (counts[i] + norm) for i in indices]
    return models.SparseVector(indices=indices, values=weights)


def query_vector(query: str) -> models.SparseVector | None:
    """One unit weight per distinct query term and per distinct stem of one (Qdrant
    multiplies in each term's IDF)."""
    terms = keyword_terms(query)
    indices = sorted({term_index(t) for t in [*terms, *(STEM + stem(t) for t in terms)]})
    if not indices:
        return None
    return models.SparseVector(indices=indices, values=[1.0] * len(indices))


# -- filters ---------------------------------------------------------------------------


def match(key: str, value: str | int) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def within(key: str, **bounds: float) -> models.FieldCondition:
    return models.FieldCondition(key=key, range=models.Range(**bounds))


def prefix_conditions(prefix: Namespace) -> list[models.Condition]:
    """Label-wise namespace prefix, the tenant first (its ``is_tenant`` index)."""
    if not prefix:
        return []
    return [match("tenant", prefix[0]), match("nsp", join_namespace(prefix))]


def namespace_conditions(namespace: Namespace) -> list[models.Condition]:
    """Exactly ``namespace`` (tenant first)."""
    return [match("tenant", namespace[0]), match("ns", join_namespace(namespace))]


def view_conditions(view: View) -> list[models.Condition]:
    """Qdrant form of :meth:`View.admits`."""
    now = view.now.timestamp()
    out: list[models.Condition] = []
    if not view.include_expired:
        out.append(within("expires", gt=now))
    if view.as_of is None and view.include_superseded:
        return out
    if view.as_of is None:
        out.append(match("head", 1))
    moment = now if view.as_of is None else view.as_of.timestamp()
    return [*out, within("opens", lte=moment), within("closes", gt=moment)]


def admits(view: View, found: Mapping[str, Any]) -> bool:
    """Python form of :func:`view_conditions` over a point's payload."""
    now = view.now.timestamp()
    if not view.include_expired and not found["expires"] > now:
        return False
    if view.as_of is None and view.include_superseded:
        return True
    if view.as_of is None and found["head"] != 1:
        return False
    moment = now if view.as_of is None else view.as_of.timestamp()
    return bool(found["opens"] <= moment < found["closes"])


def _equal(path: tuple[str, ...], operand: object) -> models.Condition:
    key = path_key(path)
    kind = kind_of(operand)
    if kind == "number":
        assert isinstance(operand, int | float)
        return within(f"n.{key}", gte=float(operand), lte=float(operand))
    if kind == "string":
        assert isinstance(operand, str)
        return match(f"s.{key}", operand)
    if kind in ("true", "false"):
        return match(f"b.{key}", int(operand is True))
    return match("z", key)


def condition(cond: Condition) -> models.Condition:
    """One filter condition (not a string ordering) as a Qdrant condition."""
    if cond.op == "$eq":
        return _equal(cond.path, cond.operand)
    if cond.op == "$ne":
        present = match("p", path_key(cond.path))
        return models.Filter(must=[present], must_not=[_equal(cond.path, cond.operand)])
    if cond.op == "$in":
        assert isinstance(cond.operand, tuple)
        return models.Filter(should=[_equal(cond.path, item) for item in cond.operand])
    assert isinstance(cond.operand, int | float) and not isinstance(cond.operand, bool)
    bound = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}[cond.op]
    return within(f"n.{path_key(cond.path)}", **{bound: float(cond.operand)})


def split_conditions(
    conditions: Sequence[Condition],
) -> tuple[list[models.Condition], tuple[Condition, ...]]:
    """``(pushed down, left over)``: string orderings are left for Python to evaluate."""
    pushed: list[models.Condition] = []
    left: list[Condition] = []
    for cond in conditions:
        if cond.op in SQL_OPERATORS and isinstance(cond.operand, str):
            left.append(cond)
        else:
            pushed.append(condition(cond))
    return pushed, tuple(left)


def scan_filter(scan: Scan, tenant: str | None, *extra: models.Condition) -> models.Filter:
    """Every pushed-down condition of ``scan`` (the caller handles the left-over ones).

    ``tenant`` scopes an empty prefix (the caller's :func:`~engram.tenant_scope`).
    """
    must: list[models.Condition] = prefix_conditions(scan.prefix)
    if not scan.prefix and tenant is not None:
        must.append(match("tenant", tenant))
    must += view_conditions(scan.view)
    must += split_conditions(scan.conditions)[0]
    if scan.tags:
        must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=list(scan.tags))))
    return models.Filter(must=[*must, *extra])


def has_ids(ids: Sequence[str]) -> models.HasIdCondition:
    return models.HasIdCondition(has_id=[point_id(i) for i in ids])


def keys_filter(namespace: Namespace, keys: Sequence[str], *, heads: bool) -> models.Filter:
    """Versions (only current ones with ``heads``) of ``keys`` in exactly ``namespace``."""
    must = [
        *namespace_conditions(namespace),
        models.FieldCondition(key="key", match=models.MatchAny(any=list(keys))),
    ]
    return models.Filter(must=[*must, match("head", 1)] if heads else must)


def erase_filter(prefix: Namespace, keys: Sequence[str] | None) -> models.Filter:
    """Every version of ``keys`` in exactly ``prefix``, or of everything under it."""
    if keys is not None:
        return keys_filter(prefix, keys, heads=False)
    return models.Filter(must=prefix_conditions(prefix))
