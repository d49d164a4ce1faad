"""Must-show: ``engram demo`` narrates every tier, recall in a second thread, then erasure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_recalls_in_a_second_thread_and_erases_at_the_end(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    done = subprocess.run(
        [sys.executable, "-m", "engram", "demo", "--home", str(home), "--thread", "d1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    for tier in ("hot tier:", "cold tier:", "documents:", "outbox:"):
        assert tier in out
    assert "Risk tolerance (conservative)" in out and "(thread d1, checkpoint " in out
    second = out[out.index("7. A second thread d1-next") :]
    assert "[memory] recalled 3 user facts and 1 conventions" in second
    assert "Tailored: conservative risk tolerance" in second
    assert 'thread_id="d1" checkpoint_id="' in second
    report = json.loads(
        "\n".join(
            line[4:]
            for line in out[out.index("8. Erasure") :].splitlines()
            if line.startswith("  | ")
        )
    )
    assert sorted(report["threads"]) == ["d1", "d1-next"]
    assert report["facts"]["keys"] == 3 and len(report["documents"]) == 2
    assert report["participants"] == {"outbox": {"publications": 1}}
    assert "export afterwards: 0 facts, 0 documents, 0 threads; outbox: 0 publications" in out
