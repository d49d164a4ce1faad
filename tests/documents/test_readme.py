"""The README's document example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_documents_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = README.read_text().split("\n## Documents\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "README.md", "exec"), {})
    assert (tmp_path / ".engram/documents/acme/PROGRESS.md").is_file()
    assert not (tmp_path / ".engram/documents/acme/learnings").exists()
    assert (tmp_path / ".engram/index/documents.db").is_file()
