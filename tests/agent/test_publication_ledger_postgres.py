"""The outbox beside a PostgreSQL hot tier: one row per exact draft, scoped to the
principal by its predicates and to the tenant by row-level security, erased with its bytes."""

from __future__ import annotations

import psycopg
import pytest

from engram import Principal
from engram.agent import url_outbox
from engram.backends.postgres.outbox import PostgresPublicationLedger
from engram.stores.hot import setup_checkpointer

ALICE = Principal("ledger-acme", "alice")
BOB = Principal("ledger-acme", "bob")
NAMESAKE = Principal("ledger-other", "alice")


@pytest.fixture
def ledger(postgres_url: str) -> PostgresPublicationLedger:
    found = url_outbox(setup_checkpointer(postgres_url))
    assert isinstance(found, PostgresPublicationLedger)
    for who in (ALICE, BOB, NAMESAKE):
        found.erase(who)
    return found


def test_the_same_draft_twice_is_one_row(ledger: PostgresPublicationLedger) -> None:
    first = ledger.publish(ALICE, "t1", "# report\\n", "alice")
    again = ledger.publish(ALICE, "t1", "# report\\n", "someone")
    assert first.created and not again.created
    assert (again.idempotency_key, again.approved_by) == (first.idempotency_key, "alice")
    assert [p.report for p in ledger.publications(ALICE)] == ["# report\\n"]


def test_rows_are_the_principals_and_the_tenant_setting_guards_them(
    ledger: PostgresPublicationLedger,
) -> None:
    ledger.publish(ALICE, "t1", "alice's", "alice")
    ledger.publish(BOB, "t1", "bob's", "bob")
    ledger.publish(NAMESAKE, "t1", "namesake's", "alice")
    assert [p.report for p in ledger.publications(ALICE)] == ["alice's"]
    assert [p.report for p in ledger.publications(NAMESAKE)] == ["namesake's"]
    with psycopg.connect(ledger.url) as conn:  # no tenant set: row-level security hides all
        assert conn.execute("SELECT count(*) FROM engram_publications").fetchone() == (0,)
        conn.execute("SELECT set_config('app.tenant_id', %s, true)", (ALICE.tenant_id,))
        seen = conn.execute("SELECT DISTINCT tenant_id FROM engram_publications").fetchall()
        assert seen == [(ALICE.tenant_id,)]


def test_erase_removes_only_that_users_reports(ledger: PostgresPublicationLedger) -> None:
    for n in range(3):
        ledger.publish(ALICE, f"t{n}", f"WOMBAT-{n} says hold", "alice")
    ledger.publish(BOB, "t9", "bob's report", "bob")
    ledger.publish(NAMESAKE, "t1", "namesake report", "alice")
    assert ledger.erase(ALICE) == {"publications": 3}
    assert ledger.publications(ALICE) == [] and ledger.erase(ALICE) == {"publications": 0}
    assert [p.report for p in ledger.publications(BOB)] == ["bob's report"]
    assert [p.report for p in ledger.publications(NAMESAKE)] == ["namesake report"]


def test_only_a_postgres_hot_tier_has_an_outbox_beside_it() -> None:
    assert url_outbox("sqlite:///x/checkpoints.db") is None
    assert url_outbox("redis://127.0.0.1:6379/0") is None
    assert url_outbox("memory://") is None
