"""The eval commands end to end on the shared data (small ``--limit``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli import main


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)


def _without_timings(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    doc.pop("timings")
    return doc


@pytest.mark.parametrize("benchmark", ["locomo", "longmemeval"])
def test_benchmark_writes_json_markdown_plot(
    benchmark: str, data_root: Path, tmp_path: Path
) -> None:
    args = ["eval", benchmark, "--data", str(data_root), "--limit", "12", "--embedder", "hash"]
    _run([*args, "--quiet", "--out", str(tmp_path / "a")])
    doc = json.loads((tmp_path / "a" / f"{benchmark}.json").read_text())
    assert doc["config"]["questions"] == 12
    assert "bm25" in doc["methods"] and "dense (LangGraph InMemoryStore)" in doc["methods"]
    assert doc["reference"]["full context"]["tokens"] > 4000
    assert (tmp_path / "a" / f"{benchmark}.png").read_bytes()[:4] == b"\x89PNG"
    table = (tmp_path / "a" / f"{benchmark}.md").read_text()
    assert "| bm25 |" in table and "full context" in table
    _run([*args, "--quiet", "--out", str(tmp_path / "b")])
    assert _without_timings(tmp_path / "a" / f"{benchmark}.json") == _without_timings(
        tmp_path / "b" / f"{benchmark}.json"
    )


def test_bad_data_path_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "locomo", "--data", str(tmp_path), "--quiet"])
    assert result.exit_code == 1 and "ConfigError" in result.output


def test_conversations_option_keeps_the_chosen_haystacks(data_root: Path, tmp_path: Path) -> None:
    args = ["eval", "locomo", "--data", str(data_root), "--embedder", "hash", "--quiet"]
    _run([*args, "--conversations", "5-6", "--limit", "5", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "locomo.json").read_text())
    assert doc["config"]["haystack_selection"] == "5-6"
    assert doc["config"]["haystacks"] == 1 and doc["config"]["questions"] == 5
    result = CliRunner().invoke(main, [*args, "--conversations", "8-12", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "outside 0-9" in result.output
