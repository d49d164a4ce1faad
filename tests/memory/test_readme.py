"""The README's memory-layer example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The memory layer") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "the memory-layer section has no python example"
    return match.group(1)


def test_the_readme_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(_example(), str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("held - held for review")
    assert 'thread_id="t1" checkpoint_id="c1"' in "\n".join(out)
    assert out[-2] == "Risk tolerance is conservative"
    assert out[-1] == "1 fact erased"
    assert (tmp_path / ".engram" / "memory.db").exists()
