"""``engram agent approve`` publishes only the draft the user names by its hash (or, when
asked in so many words, ``--approve-unseen``); anything else publishes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from analyst_support import PRINCIPAL, REQUEST, ledger_rows
from click.testing import CliRunner

from engram.agent import MarketAnalyst
from engram.cli import main


@pytest.fixture
def paused(tmp_path: Path) -> tuple[Path, str]:
    home = tmp_path / "home"
    status = MarketAnalyst(home=home).run(PRINCIPAL, REQUEST, thread_id="t1")
    assert status.stage == "awaiting_approval" and status.draft_hash
    return home, status.draft_hash


def _approve(home: Path, *args: str) -> tuple[int, str]:
    who = ["--tenant", PRINCIPAL.tenant_id, "--user", PRINCIPAL.user_id, "--no-memory"]
    done = CliRunner().invoke(main, ["agent", "approve", "t1", "--home", str(home), *who, *args])
    return done.exit_code, done.output


def _stage(home: Path) -> str:
    return MarketAnalyst(home=home).status(PRINCIPAL, "t1").stage


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--draft-hash", "abc1234"),  # 7 digits
        ("--draft-hash", "zzzzzzzz"),  # not hex
        ("--draft-hash", " 38bfd73a6dfe"),
        ("--draft-hash", "0" * 65),
    ],
    ids=["no-hash", "short", "not-hex", "space", "too-long"],
)
def test_approve_without_a_usable_hash_publishes_nothing(
    paused: tuple[Path, str], args: tuple[str, ...]
) -> None:
    home, _ = paused
    code, output = _approve(home, *args)
    assert code == 1 and output.startswith("Error: InvalidInputError: ")
    assert len(output.strip().splitlines()) == 1
    assert _stage(home) == "awaiting_approval" and ledger_rows(home) == []


def test_a_hash_of_another_draft_is_refused(paused: tuple[Path, str]) -> None:
    home, real = paused
    other = ("0" if real[0] != "0" else "1") + real[1:12]
    code, output = _approve(home, "--draft-hash", other)
    assert code == 1 and "ConflictError" in output and real[:12] in output
    assert _stage(home) == "awaiting_approval" and ledger_rows(home) == []


def test_the_hash_and_approve_unseen_exclude_each_other(paused: tuple[Path, str]) -> None:
    home, real = paused
    code, output = _approve(home, "--draft-hash", real, "--approve-unseen")
    assert code == 1 and "exclude each other" in output and ledger_rows(home) == []


@pytest.mark.parametrize("length", [8, 12, 64])
def test_a_prefix_of_eight_or_more_digits_publishes_once(
    paused: tuple[Path, str], length: int
) -> None:
    home, real = paused
    code, output = _approve(home, "--draft-hash", real[:length].upper())
    assert code == 0, output
    assert "thread t1: published" in output and len(ledger_rows(home)) == 1


def test_approve_unseen_publishes_the_paused_draft(paused: tuple[Path, str]) -> None:
    home, _ = paused
    code, output = _approve(home, "--approve-unseen")
    assert code == 0, output
    assert _stage(home) == "published" and len(ledger_rows(home)) == 1
