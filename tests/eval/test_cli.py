"""The eval commands end to end: on the stand-in files the tests write, and (small
``--limit``) on the real benchmark files when they are present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmark_files import LOCOMO, LONGMEMEVAL
from click.testing import CliRunner

from engram.cli import main
from engram.eval import load_locomo, load_longmemeval
from engram.eval._context import Packer
from engram.eval._tokens import default_counter

CASES = {
    # benchmark: (--limit, haystacks it needs, groups that partition the questions, a
    # depth at which every question's evidence is reachable)
    "locomo": (12, 2, ("1-4", "5"), 5),
    "longmemeval": (4, 1, ("all",), 3),
}


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)


def _without_timings(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    doc.pop("timings")
    return doc


def _full_context_tokens(benchmark: str, data: Path, limit: int) -> float:
    """Mean tokens of the whole haystack over the first ``limit`` scored questions."""
    haystacks = load_locomo(data) if benchmark == "locomo" else [load_longmemeval(data)]
    counter, sizes = default_counter(), []
    for conversation in haystacks:
        full = Packer(conversation.turns, counter).full().tokens
        sizes += [full] * sum(1 for q in conversation.questions if q.evidence)
    return sum(sizes[:limit]) / limit


@pytest.mark.parametrize("benchmark", sorted(CASES))
def test_benchmark_writes_json_markdown_plot(
    benchmark: str, fixture_data: Path, tmp_path: Path
) -> None:
    limit, haystacks, partition, depth = CASES[benchmark]
    args = ["eval", benchmark, "--data", str(fixture_data), "--limit", str(limit)]
    args += ["--embedder", "hash", "--quiet"]
    _run([*args, "--out", str(tmp_path / "a")])
    doc = json.loads((tmp_path / "a" / f"{benchmark}.json").read_text())
    assert doc["config"]["questions"] == limit and doc["config"]["haystacks"] == haystacks
    bm25 = doc["methods"]["bm25"]
    assert sum(bm25[group]["n"] for group in partition) == limit
    # Each stand-in question names only its evidence's objects: BM25 must find it.
    assert bm25[partition[0]][f"recall@{depth}"] == 1.0
    assert "dense (LangGraph InMemoryStore)" in doc["methods"]
    tokens = doc["reference"]["full context"]["tokens"]
    assert tokens == pytest.approx(_full_context_tokens(benchmark, fixture_data, limit))
    assert (tmp_path / "a" / f"{benchmark}.png").read_bytes()[:4] == b"\x89PNG"
    table = (tmp_path / "a" / f"{benchmark}.md").read_text()
    assert "| bm25 |" in table and "full context" in table
    _run([*args, "--out", str(tmp_path / "b")])
    assert _without_timings(tmp_path / "a" / f"{benchmark}.json") == _without_timings(
        tmp_path / "b" / f"{benchmark}.json"
    )


def test_locomo_groups_count_each_category_once(fixture_data: Path, tmp_path: Path) -> None:
    args = ["eval", "locomo", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--out", str(tmp_path)])
    groups = json.loads((tmp_path / "locomo.json").read_text())["methods"]["bm25"]
    assert {g: int(row["n"]) for g, row in groups.items() if g != "1-4"} == LOCOMO.categories
    assert groups["1-4"]["n"] == sum(n for c, n in LOCOMO.categories.items() if c != "5")


def test_longmemeval_groups_by_question_type(fixture_data: Path, tmp_path: Path) -> None:
    args = ["eval", "longmemeval", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--out", str(tmp_path)])
    groups = json.loads((tmp_path / "longmemeval.json").read_text())["methods"]["bm25"]
    assert {g: int(row["n"]) for g, row in groups.items() if g != "all"} == LONGMEMEVAL.types
    # Two answer sessions: one of them at rank 1 is half the evidence.
    assert groups["multi-session"]["recall@1"] == 0.5 and groups["multi-session"]["all@3"] == 1.0


def test_bad_data_path_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "locomo", "--data", str(tmp_path), "--quiet"])
    assert result.exit_code == 1 and "ConfigError" in result.output


def test_conversations_option_keeps_the_chosen_haystacks(
    fixture_data: Path, tmp_path: Path
) -> None:
    args = ["eval", "locomo", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--conversations", "1-2", "--limit", "5", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "locomo.json").read_text())
    assert doc["config"]["haystack_selection"] == "1-2"
    assert doc["config"]["haystacks"] == 1 and doc["config"]["questions"] == 5
    _run([*args, "--conversations", "0,2", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "locomo.json").read_text())
    assert doc["config"]["haystacks"] == 2 and doc["config"]["turns"] == 2 * LOCOMO.turns // 3
    result = CliRunner().invoke(main, [*args, "--conversations", "2-5", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "outside 0-2" in result.output


def test_distractors_option_fills_each_memory_with_other_conversations(
    fixture_data: Path, tmp_path: Path
) -> None:
    args = ["eval", "locomo", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--conversations", "0", "--distractors", "2", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "locomo.json").read_text())
    assert doc["config"]["distractors"] == 2 and doc["config"]["haystacks"] == 1
    assert doc["config"]["turns"] == LOCOMO.turns  # its own and both others'
    result = CliRunner().invoke(main, [*args, "--distractors", "3", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "distractors must be 0 to 2" in result.output


@pytest.mark.parametrize("benchmark", ["locomo", "longmemeval"])
def test_depth_option_is_the_k_of_each_recall(
    benchmark: str, fixture_data: Path, tmp_path: Path
) -> None:
    """``--depth 1`` ranks one turn per question: nothing beyond it is ever counted."""
    args = ["eval", benchmark, "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--depth", "1", "--out", str(tmp_path / "one")])
    _run([*args, "--out", str(tmp_path / "deep")])
    one = json.loads((tmp_path / "one" / f"{benchmark}.json").read_text())
    deep = json.loads((tmp_path / "deep" / f"{benchmark}.json").read_text())
    assert (one["config"]["depth"], deep["config"]["depth"]) == (1, 300)
    for method, groups in one["methods"].items():
        for group, row in groups.items():
            counted = [k for k in row if k.startswith("recall@") and not k.endswith("tok")]
            assert len({row[k] for k in counted}) == 1  # recall@5 = recall@50: one turn
            assert row["recall@4000tok"] <= deep["methods"][method][group]["recall@4000tok"]
    result = CliRunner().invoke(main, [*args, "--depth", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--depth" in result.output


@pytest.mark.parametrize("benchmark", sorted(CASES))
def test_real_benchmark_runs_end_to_end(benchmark: str, real_data: Path, tmp_path: Path) -> None:
    args = ["eval", benchmark, "--data", str(real_data), "--limit", "12", "--embedder", "hash"]
    _run([*args, "--quiet", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / f"{benchmark}.json").read_text())
    assert doc["config"]["questions"] == 12
    assert "bm25" in doc["methods"] and "dense (LangGraph InMemoryStore)" in doc["methods"]
    assert doc["reference"]["full context"]["tokens"] > 4000


def test_assistant_turns_store_the_replies_too(fixture_data: Path, tmp_path: Path) -> None:
    args = ["eval", "longmemeval", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--out", str(tmp_path / "user")])
    _run([*args, "--assistant-turns", "--out", str(tmp_path / "both")])
    user = json.loads((tmp_path / "user" / "longmemeval.json").read_text())
    both = json.loads((tmp_path / "both" / "longmemeval.json").read_text())
    assert (user["config"]["assistant_turns"], both["config"]["assistant_turns"]) == (False, True)
    assert both["config"]["turns"] == 2 * user["config"]["turns"]
    assert both["config"]["questions"] == user["config"]["questions"]
    locomo = ["eval", "locomo", "--data", str(fixture_data), "--assistant-turns"]
    bad = CliRunner().invoke(main, [*locomo, "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--assistant-turns" in bad.output


def test_turn_context_adds_the_contextual_vectors_row(fixture_data: Path, tmp_path: Path) -> None:
    from engram.eval._engram import DEFAULT, turn_context_name

    args = ["eval", "longmemeval", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--out", str(tmp_path / "off")])
    off = json.loads((tmp_path / "off" / "longmemeval.json").read_text())
    assert off["config"]["turn_context"] == 0
    assert not any("turn_context" in name for name in off["methods"])
    _run([*args, "--turn-context", "2", "--out", str(tmp_path / "on")])
    on = json.loads((tmp_path / "on" / "longmemeval.json").read_text())
    assert on["config"]["turn_context"] == 2
    assert on["methods"][DEFAULT] == off["methods"][DEFAULT]
    assert on["methods"][turn_context_name(2)]["all"]["n"] == off["methods"][DEFAULT]["all"]["n"]
    bad = CliRunner().invoke(main, [*args, "--turn-context", "-1", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "turn-context" in bad.output


def test_turn_context_rule_names_the_contextual_row(fixture_data: Path, tmp_path: Path) -> None:
    from engram.eval._engram import DEFAULT, turn_context_name

    args = ["eval", "longmemeval", "--data", str(fixture_data), "--embedder", "hash", "--quiet"]
    _run([*args, "--turn-context", "2", "--turn-context-rule", "shorter", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "longmemeval.json").read_text())
    assert doc["config"]["turn_context_rule"] == "shorter"
    row = doc["methods"][turn_context_name(2, "shorter")]
    assert row["all"]["n"] == doc["methods"][DEFAULT]["all"]["n"]
    assert turn_context_name(2) not in doc["methods"]
    bad = CliRunner().invoke(main, [*args, "--turn-context-rule", "often", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "turn-context-rule" in bad.output
