"""Must-show: ``engram demo`` narrates every tier, recall in a second thread, erasure of a
second user; it acts for a principal of its own, keeps what it made for the user to explore,
prints next steps that work on it, and ``--clean`` erases only what demo runs made."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from engram import Memory, Principal
from engram.agent import MarketAnalyst
from engram.cli import main
from engram.recall import HashEmbedder

OWN = Principal("demo", "analyst")
"""The agent's default principal: a user's own threads live here."""


def _demo(tmp_path: Path, home: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "engram", "demo", "--home", str(home), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _principal(out: str) -> Principal:
    found = re.search(r"principal (demo-[0-9a-f]{8})/analyst, thread", out)
    assert found, out[:400]
    return Principal(found.group(1), "analyst")


def test_demo_recalls_in_a_second_thread_and_erases_a_second_user(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    out = _demo(tmp_path, home, "--thread", "d1")
    for tier in ("hot tier:", "cold tier:", "documents:", "outbox:"):
        assert tier in out
    assert "Risk tolerance: conservative" in out and "(thread d1, checkpoint " in out
    second = out[out.index("7. A second thread d1-next") :]
    assert "[memory] recalled 3 user facts and 1 conventions" in second
    assert "Tailored: conservative risk tolerance" in second
    assert 'thread_id="d1" checkpoint_id="' in second
    erasure = out[out.index("8. Erasure") : out.index("Next steps")]
    report = json.loads(
        "\n".join(line[4:] for line in erasure.splitlines() if line.startswith("  | "))
    )
    assert report["user_id"] == "visitor" and report["threads"] == ["d1-visitor"]
    assert report["facts"]["keys"] == 1
    assert "export afterwards: 0 facts, 0 documents, 0 threads; outbox: 0 publications" in out
    principal = _principal(out)
    assert f"{principal.tenant_id}/analyst keeps 3 facts, 2 documents, 2 threads, 1 " in out
    assert [r.thread_id for r in MarketAnalyst(home=home).publications(principal)] == ["d1"]


def _own_state(home: Path) -> dict[str, object]:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        exported = memory.export(OWN)
    exported.pop("exported_at")
    return exported


def test_demo_leaves_the_users_own_state_alone_and_clean_erases_only_its_runs(
    tmp_path: Path,
) -> None:
    home = tmp_path / ".engram"
    MarketAnalyst(home=home).run(OWN, "Compare NVDA and AMD", thread_id="mine")
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.remember(OWN, "I hold AMD since 2019", slot="holding")
        memory.documents.write(OWN, "conventions/briefs.md", "# Mine\n\n- my own rule\n")
    before = _own_state(home)
    assert before["threads"] and before["facts"] and before["documents"] == []

    first = _principal(_demo(tmp_path, home, "--embedder", "hash"))
    second = _principal(_demo(tmp_path, home, "--embedder", "hash"))
    assert first != second and _own_state(home) == before
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        assert memory.documents.read_text(OWN, "conventions/briefs.md").endswith("my own rule\n")
        for run in (first, second):  # each run's state stays to explore
            kept = memory.export(run)
            assert len(kept["threads"]) == 2 and len(kept["facts"]) == 3

    cleaned = CliRunner().invoke(main, ["demo", "--clean", "--home", str(home)])
    assert cleaned.exit_code == 0, cleaned.output
    assert "2 demo run(s) erased" in cleaned.output
    assert _own_state(home) == before
    assert [r.thread_id for r in MarketAnalyst(home=home).publications(OWN)] == []
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        for run in (first, second):
            left = memory.export(run)
            assert left["threads"] == left["facts"] == left["documents"] == []
            assert not memory.documents.list(run)
        assert memory.documents.exists(OWN, "conventions/briefs.md")
    assert not (home / "demo-runs.jsonl").exists()
    again = CliRunner().invoke(main, ["demo", "--clean", "--home", str(home)])
    assert again.exit_code == 1 and "NotFoundError: no demo runs recorded" in again.output
    typo = CliRunner().invoke(main, ["demo", "--clean", "--home", str(tmp_path / "typo")])
    assert typo.exit_code == 1 and not (tmp_path / "typo").exists()


def test_the_next_steps_the_demo_prints_work_on_its_state(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    out = _demo(tmp_path, home, "--embedder", "hash", "--thread", "d2")
    steps = [line.strip() for line in out[out.index("Next steps") :].splitlines()[1:]]
    assert len(steps) >= 6 and all(s.startswith("engram ") for s in steps)
    outputs = {}
    for step in steps[:-1]:  # the last one, --clean, is tested above
        done = CliRunner().invoke(main, shlex.split(step)[1:])
        assert done.exit_code == 0, f"{step}: {done.output}"
        outputs[" ".join(shlex.split(step)[1:3])] = done.output
    assert "thread d2: published" in outputs["agent status"]
    assert "Risk tolerance: conservative" in outputs["recall Update my NVDA analysis"]
    assert json.loads(outputs["export --home"])["threads"]
    assert steps[-1].startswith("engram demo --clean")


def test_a_demo_thread_id_in_use_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    MarketAnalyst(home=home).run(OWN, "Compare NVDA and AMD", thread_id="taken")
    done = subprocess.run(
        [sys.executable, "-m", "engram", "demo", "--home", str(home), "--thread", "taken"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1 and "ConflictError: thread 'taken' already exists" in done.stderr
    assert not (home / "demo-runs.jsonl").exists()
