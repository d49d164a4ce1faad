"""The outbox: one row per (principal, thread, exact draft), whatever the retries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engram import Principal
from engram.agent import PublicationLedger, draft_hash
from engram.backends.sqlite.outbox import MIGRATIONS, idempotency_key

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")


def _count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM publications").fetchone()[0])


def test_publishing_the_same_draft_twice_writes_one_row(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "outbox.db")
    first = ledger.publish(ALICE, "t1", "# report\n", "alice")
    again = PublicationLedger(tmp_path / "outbox.db").publish(ALICE, "t1", "# report\n", "someone")
    assert first.created and not again.created
    assert again.idempotency_key == first.idempotency_key
    assert (again.published_at, again.approved_by) == (first.published_at, "alice")
    assert _count(tmp_path / "outbox.db") == 1


def test_a_changed_draft_or_thread_is_a_new_publication(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "outbox.db")
    keys = {
        ledger.publish(ALICE, "t1", "v1", "alice").idempotency_key,
        ledger.publish(ALICE, "t1", "v2", "alice").idempotency_key,
        ledger.publish(ALICE, "t2", "v1", "alice").idempotency_key,
        ledger.publish(BOB, "t1", "v1", "bob").idempotency_key,
    }
    assert len(keys) == 4 and _count(tmp_path / "outbox.db") == 4
    assert idempotency_key(ALICE, "t1", draft_hash("v1")) in keys


def test_publications_are_scoped_to_the_principal(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "outbox.db")
    ledger.publish(ALICE, "t1", "a", "alice")
    ledger.publish(BOB, "t9", "b", "bob")
    assert [p.thread_id for p in ledger.publications(ALICE)] == ["t1"]
    assert [p.report for p in ledger.publications(BOB)] == ["b"]


def test_setup_is_idempotent_and_versioned(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "outbox.db")
    ledger.setup()
    ledger.setup()
    with sqlite3.connect(tmp_path / "outbox.db") as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM ledger_version")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    assert draft_hash("x") == draft_hash("x") != draft_hash("y")


def _raw(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


def test_erase_removes_the_users_reports_and_their_bytes(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "outbox.db")
    for n in range(3):
        ledger.publish(ALICE, f"t{n}", f"# NVDA\n\nWOMBAT-{n} says hold\n", "alice")
    ledger.publish(Principal("other", "alice"), "t1", "namesake report", "alice")
    ledger.publish(BOB, "t9", "bob's report", "bob")
    assert b"WOMBAT-" in _raw(tmp_path)
    assert ledger.erase(ALICE) == {"publications": 3}
    assert ledger.publications(ALICE) == []
    assert [p.report for p in ledger.publications(BOB)] == ["bob's report"]
    assert [p.report for p in ledger.publications(Principal("other", "alice"))] == [
        "namesake report"
    ]
    assert b"WOMBAT-" not in _raw(tmp_path)
    assert ledger.erase(ALICE) == {"publications": 0}


def test_erasing_from_a_missing_outbox_creates_nothing(tmp_path: Path) -> None:
    ledger = PublicationLedger(tmp_path / "none" / "outbox.db")
    assert ledger.erase(ALICE) == {"publications": 0}
    assert not (tmp_path / "none").exists()
