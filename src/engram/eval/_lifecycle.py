"""The memory-lifecycle suite: YAML scenarios driving remember / recall / forget over time.

A scenario is a list of steps, each acting for one ``(tenant, user)`` at a simulated
time and optionally stating what it expects. The runner plays every scenario
against a fresh :class:`Target` (engram's public API behind a thin adapter) and
reports pass/fail per scenario, correctness per operation kind, and latency.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import yaml

from engram._principal import Principal
from engram.errors import InvalidInputError

OPS = ("remember", "recall", "forget", "get")
EXPECTATIONS = {
    "remember": {"action"},
    "recall": {"top", "contains", "absent", "count", "empty"},
    "forget": {"removed"},
    "get": {"found", "text"},
}
STEP_GAP = timedelta(minutes=1)


@dataclass(frozen=True)
class Step:
    at: datetime
    principal: Principal
    op: str
    args: Mapping[str, Any]
    expect: Mapping[str, Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Outcome:
    """What a step returned: the write action, recalled texts, erased count or got text."""

    action: str | None = None
    texts: tuple[str, ...] = ()
    removed: int | None = None
    found: str | None = None


class Target(Protocol):
    """The memory under test, one fresh instance per scenario; ``now`` is simulated time."""

    def remember(
        self, who: Principal, key: str | None, text: str, ttl: float | None, now: datetime
    ) -> str: ...

    def recall(
        self, who: Principal, query: str, k: int, now: datetime, min_score: float | None
    ) -> list[str]: ...

    def forget(self, who: Principal, key: str | None, now: datetime) -> int: ...

    def get(self, who: Principal, key: str, now: datetime) -> str | None: ...

    def close(self) -> None: ...


# --- loading ------------------------------------------------------------------------------


def _time(value: Any, previous: datetime | None) -> datetime:
    if value is None:
        return (previous or datetime(2025, 1, 1, tzinfo=UTC)) + STEP_GAP
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        moment = datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _step(raw: Mapping[str, Any], defaults: Mapping[str, Any], previous: datetime | None) -> Step:
    ops = [op for op in OPS if op in raw]
    if len(ops) != 1:
        raise InvalidInputError(f"a step needs exactly one of {OPS}: {dict(raw)!r}")
    op = ops[0]
    expect = dict(raw.get("expect") or {})
    unknown = set(expect) - EXPECTATIONS[op]
    if unknown:
        raise InvalidInputError(f"{op} cannot expect {sorted(unknown)}")
    args = {"k": defaults.get("k", 5), "min_score": defaults.get("min_score"), **(raw[op] or {})}
    tenant = str(raw.get("tenant", defaults.get("tenant", "default")))
    who = Principal(tenant, str(raw.get("user", defaults.get("user", "user"))))
    return Step(_time(raw.get("at"), previous), who, op, args, expect)


def _scenario(raw: Mapping[str, Any], defaults: Mapping[str, Any]) -> Scenario:
    steps: list[Step] = []
    for item in raw.get("steps") or []:
        steps.append(_step(item, defaults, steps[-1].at if steps else None))
    if not steps:
        raise InvalidInputError(f"scenario {raw.get('name')!r} has no steps")
    return Scenario(str(raw["name"]), str(raw.get("kind", "other")), tuple(steps))


def load_scenarios(path: Path) -> list[Scenario]:
    """Scenarios of one YAML file, or of every ``*.yaml`` in a folder (sorted by name)."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    out: list[Scenario] = []
    for file in files:
        try:
            doc = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InvalidInputError(f"cannot read scenarios from {file}: {exc}") from exc
        defaults = doc.get("defaults") or {}
        out.extend(_scenario(raw, defaults) for raw in doc.get("scenarios") or [])
    if not out:
        raise InvalidInputError(f"no scenarios found in {path}")
    return out


def shipped_scenarios() -> Path:
    """The folder of scenario files shipped with engram."""
    return Path(__file__).parent / "scenarios"


# --- checking -----------------------------------------------------------------------------


def _has(texts: Sequence[str], needle: str) -> bool:
    return any(needle.lower() in text.lower() for text in texts)


def _check_recall(expect: Mapping[str, Any], texts: Sequence[str]) -> Iterator[str]:
    if "top" in expect and not (texts and _has(texts[:1], str(expect["top"]))):
        yield f"top result lacks {expect['top']!r}"
    for needle in expect.get("contains", []):
        if not _has(texts, str(needle)):
            yield f"no result contains {needle!r}"
    for needle in expect.get("absent", []):
        if _has(texts, str(needle)):
            yield f"a result contains {needle!r}"
    if "count" in expect and len(texts) != int(expect["count"]):
        yield f"{len(texts)} results, expected {expect['count']}"
    if expect.get("empty") and texts:
        yield f"expected nothing, got {len(texts)} results"


def failures(step: Step, outcome: Outcome) -> list[str]:
    """Why ``outcome`` does not meet ``step.expect`` (empty when it does)."""
    expect = step.expect
    if step.op == "recall":
        return list(_check_recall(expect, outcome.texts))
    problems = []
    if "action" in expect and outcome.action != expect["action"]:
        problems.append(f"action {outcome.action!r}, expected {expect['action']!r}")
    if "removed" in expect and outcome.removed != int(expect["removed"]):
        problems.append(f"removed {outcome.removed}, expected {expect['removed']}")
    if "found" in expect and (outcome.found is not None) != bool(expect["found"]):
        problems.append(f"found={outcome.found is not None}, expected {expect['found']}")
    if "text" in expect and not _has([outcome.found or ""], str(expect["text"])):
        problems.append(f"got {outcome.found!r}, expected it to contain {expect['text']!r}")
    return problems


def kind_of(step: Step, last_write: str) -> str:
    """The correctness bucket of a checked step: write, update or delete.

    A remember is a write, or an update when it expects ``updated``; a forget is a
    delete. A recall or get checks the effect of the scenario's latest mutation
    (``last_write``), e.g. a recall after a forget counts for deletion.
    """
    if step.op == "remember":
        return "update" if step.expect.get("action") == "updated" else "write"
    return "delete" if step.op == "forget" else last_write


# --- running ------------------------------------------------------------------------------


def execute(target: Target, step: Step) -> Outcome:
    args, who, now = step.args, step.principal, step.at
    if step.op == "remember":
        ttl = float(args["ttl"]) if args.get("ttl") is not None else None
        return Outcome(action=target.remember(who, args.get("key"), str(args["text"]), ttl, now))
    if step.op == "recall":
        floor = None if args.get("min_score") is None else float(args["min_score"])
        texts = target.recall(who, str(args["query"]), int(args["k"]), now, floor)
        return Outcome(texts=tuple(texts))
    if step.op == "forget":
        key = None if args.get("all") else str(args["key"])
        return Outcome(removed=target.forget(who, key, now))
    return Outcome(found=target.get(who, str(args["key"]), now))


@dataclass
class _Totals:
    checks: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


def _play(scenario: Scenario, target: Target, totals: _Totals) -> dict[str, Any]:
    problems: list[str] = []
    last_write = "write"
    for index, step in enumerate(scenario.steps):
        start = time.perf_counter()
        outcome = execute(target, step)
        totals.latency[step.op].append((time.perf_counter() - start) * 1000)
        if step.op == "forget":
            last_write = "delete"
        elif step.op == "remember":
            last_write = "update" if outcome.action == "updated" else "write"
        if step.expect:
            found = failures(step, outcome)
            totals.checks[kind_of(step, last_write)].append(not found)
            problems += [f"step {index + 1} ({step.op}): {p}" for p in found]
    return {
        "name": scenario.name,
        "kind": scenario.kind,
        "passed": not problems,
        "problems": problems,
    }


def _latency(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
    }


def run_scenarios(
    scenarios: Sequence[Scenario],
    factory: Callable[[], Target],
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """Play each scenario on a fresh target; the result document (timings under ``timings``)."""
    totals = _Totals()
    results = []
    for scenario in scenarios:
        target = factory()
        try:
            results.append(_play(scenario, target, totals))
        finally:
            target.close()
        if progress is not None:
            progress(1)
    correctness = {
        kind: {"passed": sum(oks), "total": len(oks), "rate": round(sum(oks) / len(oks), 4)}
        for kind, oks in sorted(totals.checks.items())
    }
    return {
        "benchmark": "lifecycle",
        "scenarios": results,
        "passed": sum(r["passed"] for r in results),
        "total": len(results),
        "correctness": correctness,
        "timings": {op: _latency(v) for op, v in sorted(totals.latency.items())},
    }


def lifecycle_markdown(result: dict[str, Any]) -> str:
    out = ["# lifecycle", ""]
    out += [f"- {key}: {value}" for key, value in sorted(result.get("config", {}).items())]
    out += ["", f"**{result['passed']} / {result['total']} scenarios pass**", ""]
    out += ["| scenario | kind | result | problems |", "|---|---|---|---|"]
    for row in result["scenarios"]:
        verdict = "pass" if row["passed"] else "FAIL"
        out.append(f"| {row['name']} | {row['kind']} | {verdict} | {'; '.join(row['problems'])} |")
    out += ["", "| operation | checks passed | rate |", "|---|---|---|"]
    for kind, row in result["correctness"].items():
        out.append(f"| {kind} | {row['passed']} / {row['total']} | {row['rate']:.3f} |")
    out += ["", "| operation | n | median ms | p95 ms |", "|---|---|---|---|"]
    for op, row in result["timings"].items():
        out.append(f"| {op} | {row['n']} | {row['median_ms']:.3f} | {row['p95_ms']:.3f} |")
    return "\n".join(out) + "\n"
