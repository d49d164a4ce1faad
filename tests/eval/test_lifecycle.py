"""The lifecycle suite: scenario loading, checking, and a run on engram's cold tier."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram import Principal
from engram.cli import main
from engram.errors import InvalidInputError
from engram.eval._lifecycle import Outcome, Step, failures, load_scenarios, shipped_scenarios

SCENARIO = """
defaults: {tenant: t1}
scenarios:
  - name: update then forget
    kind: contradiction
    steps:
      - at: 2025-01-01T00:00:00Z
        user: u
        remember: {key: tea, text: "U drinks green tea."}
        expect: {action: added}
      - user: u
        remember: {key: tea, text: "U switched to black tea."}
        expect: {action: updated}
      - user: u
        recall: {query: "black tea"}
        expect: {top: "black tea", absent: ["green tea"]}
      - user: u
        forget: {key: tea}
        expect: {removed: 1}
      - user: u
        get: {key: tea}
        expect: {found: false}
      - tenant: t2
        user: u
        recall: {query: "tea"}
        expect: {count: 0}
  - name: a wrong expectation fails
    steps:
      - user: v
        remember: {text: "V likes chess."}
        expect: {action: updated}
"""


def test_shipped_scenarios_load_and_cover_every_kind() -> None:
    scenarios = load_scenarios(shipped_scenarios())
    kinds = {s.kind for s in scenarios}
    assert {
        "paraphrase",
        "contradiction",
        "expiry",
        "unanswerable",
        "deletion",
        "cross-tenant",
    } <= kinds
    first = scenarios[0].steps
    assert first[1].at > first[0].at  # steps without `at` advance the clock


def test_bad_scenarios_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    two_ops = "{user: u, recall: {query: q}, forget: {key: k}}"
    bad.write_text(f"scenarios:\n  - name: x\n    steps:\n      - {two_ops}\n")
    with pytest.raises(InvalidInputError):
        load_scenarios(bad)
    bad.write_text(
        "scenarios:\n  - name: x\n    steps:\n      - {user: u, get: {key: k}, expect: {top: a}}\n"
    )
    with pytest.raises(InvalidInputError):
        load_scenarios(bad)


def _step(op: str, **expect: object) -> Step:
    return Step(datetime(2025, 1, 1, tzinfo=UTC), Principal("t", "u"), op, {}, expect)


def test_recall_expectations() -> None:
    texts = Outcome(texts=("Bob takes oat milk", "Bob likes tea"))
    assert failures(_step("recall", top="oat milk"), texts) == []
    assert failures(_step("recall", top="tea"), texts) == ["top result lacks 'tea'"]
    assert failures(_step("recall", absent=["black"], contains=["TEA"]), texts) == []
    assert len(failures(_step("recall", absent=["milk"], count=1, empty=True), texts)) == 3
    assert failures(_step("get", found=False), Outcome(found="x")) != []
    assert failures(_step("forget", removed=1), Outcome(removed=1)) == []


@pytest.mark.parametrize("target", ["cold", "memory"])
def test_cli_runs_a_scenario_file(target: str, tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(SCENARIO)
    args = ["eval", "lifecycle", "--data", str(path), "--embedder", "hash", "--quiet"]
    args += ["--target", target]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "lifecycle.json").read_text())
    verdicts = {s["name"]: s["passed"] for s in doc["scenarios"]}
    assert verdicts == {"update then forget": True, "a wrong expectation fails": False}
    assert doc["correctness"]["delete"] == {"passed": 3, "total": 3, "rate": 1.0}
    assert doc["correctness"]["update"] == {"passed": 2, "total": 3, "rate": 0.6667}
    assert doc["timings"]["recall"]["n"] == 2
    assert (
        "| update then forget | contradiction | pass |"
        in (tmp_path / "out" / "lifecycle.md").read_text()
    )


def test_cli_runs_the_shipped_scenarios_on_the_memory_layer(tmp_path: Path) -> None:
    args = ["eval", "lifecycle", "--embedder", "hash", "--quiet", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "lifecycle.json").read_text())
    assert doc["total"] == len(load_scenarios(shipped_scenarios()))
    assert doc["config"]["target"] == "engram.Memory"
    by_kind = {s["kind"]: s["passed"] for s in doc["scenarios"]}
    assert by_kind["cross-tenant"] and by_kind["expiry"] and by_kind["deletion"]
