"""Pure steps of the cold store: namespaces of targets, texts of values, scoring of
candidates, listing namespaces. No I/O here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any, Protocol

from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
    get_text_at_path,
    tokenize_path,
)

from engram import _validate as check
from engram._principal import Principal
from engram.errors import InvalidInputError
from engram.policy import WriteCandidate
from engram.recall import Weights, combiner, recency
from engram.recall import relevance as fused_relevance
from engram.recall.filters import parse_filter
from engram.stores.cold.records import MemoryRecord, Namespace, Recalled, validate_namespace


def namespace_of(target: Principal | Namespace) -> Namespace:
    """The namespace a principal (``(tenant, user)``) or an explicit namespace names."""
    if isinstance(target, Principal):
        return target.namespace
    if isinstance(target, str | bytes) or not isinstance(target, tuple | list):
        raise InvalidInputError(
            f"a Principal or a namespace tuple is required, got {type(target).__name__}"
        )
    return validate_namespace(tuple(target))


def check_op(op: Op) -> None:
    """Every label and key a LangGraph operation carries, by engram's rules (ops given to
    ``batch`` directly skip ``BaseStore``'s own checks)."""
    if isinstance(op, GetOp | PutOp):
        namespace_of(op.namespace)
        check.text("key", op.key, line=True)
    elif isinstance(op, SearchOp):
        if op.namespace_prefix:
            namespace_of(op.namespace_prefix)
        check.integer("limit", op.limit, minimum=1)
        check.integer("offset", op.offset, minimum=0)
        parse_filter(op.filter)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            for label in condition.path:
                check.text("namespace label", label, line=True)


def text_of(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text indexed for ``value``: its ``fields`` (JSON paths), else ``value["text"]``
    when it is a string, else the whole value as JSON."""
    if fields is not None and list(fields) != ["$"]:
        found: list[str] = []
        for path in fields:
            found.extend(str(t) for t in get_text_at_path(dict(value), tokenize_path(path)))
        return "\n".join(found)
    text = value.get("text")
    if fields is None and isinstance(text, str):
        return text
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True)


def score(
    signals: Mapping[str, tuple[datetime, float]],
    relevance: Mapping[str, float],
    weights: Weights,
    now: datetime,
) -> list[tuple[str, float, float, float]]:
    """``(id, score, relevance, recency)`` of each candidate, best first (ties by id).

    The same values as :func:`engram.recall.recency` and :func:`engram.recall.combine`
    per candidate, with the recency of each distinct moment computed once (a bulk load
    records many memories at one moment)."""
    recencies: dict[datetime, float] = {}
    mean = combiner(weights)
    out = []
    for row_id, (recorded_at, importance) in signals.items():
        rec = recencies.get(recorded_at)
        if rec is None:
            rec = recencies[recorded_at] = recency(recorded_at, now, weights.half_life_days)
        rel = relevance.get(row_id, 0.0)
        out.append((row_id, mean(rec, importance, rel), rel, rec))
    out.sort(key=itemgetter(0))  # by id, then (stable) best score first
    out.sort(key=itemgetter(1), reverse=True)
    return out


def rank(
    records: Iterable[MemoryRecord],
    relevance: Mapping[str, float],
    weights: Weights,
    now: datetime,
) -> list[Recalled]:
    """Score whole ``records`` and sort best first (ties by id)."""
    by_id = {r.id: r for r in records}
    signals = {r.id: (r.recorded_at, r.importance) for r in by_id.values()}
    return [
        Recalled(by_id[i], value, rel, rec, by_id[i].importance)
        for i, value, rel, rec in score(signals, relevance, weights, now)
    ]


def fuse(keyword: Sequence[str], vector: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Relevance in [0, 1] of every candidate: reciprocal-rank fusion of both lists,
    blended with the cosines normalised over the candidates."""
    return fused_relevance(keyword, vector)


def _matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


def list_namespaces(
    namespaces: Iterable[Namespace],
    conditions: Sequence[MatchCondition],
    max_depth: int | None,
    limit: int,
    offset: int,
) -> list[Namespace]:
    """LangGraph's ``ListNamespacesOp`` semantics over a list of namespaces."""
    found = {
        ns[:max_depth] if max_depth is not None else ns
        for ns in namespaces
        if all(_matches(c, ns) for c in conditions)
    }
    return sorted(found)[offset : offset + limit]


def literal_prefix(conditions: Sequence[MatchCondition]) -> Namespace:
    """The longest wildcard-free leading part of the first prefix condition."""
    for condition in conditions:
        if condition.match_type == "prefix":
            out: list[str] = []
            for label in condition.path:
                if label == "*":
                    break
                out.append(label)
            return tuple(out)
    return ()


class Decision(Protocol):
    """What a write policy returns (see :class:`engram.policy.PolicyDecision`)."""

    @property
    def allowed(self) -> bool: ...
    @property
    def held_for_review(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def redactions(self) -> tuple[str, ...]: ...


class Policy(Protocol):
    """Any write policy with ``evaluate(candidate) -> decision`` (e.g. ``WritePolicy``)."""

    def evaluate(self, candidate: WriteCandidate, /) -> Decision: ...
