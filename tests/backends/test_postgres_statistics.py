"""PostgreSQL keeps sampled column values in ``pg_statistic`` (the planner's most common
values and histograms), filled by ``ANALYZE``, which autovacuum runs by itself. After
``forget``, no erased byte may remain there either: every tier's compaction analyses the
tables it rewrites."""

from __future__ import annotations

import pytest

from engram import Memory, Principal
from engram.backends.postgres._cold_sql import TABLE as COLD_TABLE
from engram.backends.postgres._roles import CLEAR_STATISTICS_SINCE
from engram.server.auth import open_keyring
from engram.server.keys import SECRET_ENV

pytestmark = pytest.mark.postgres

ALICE, BOB = Principal("acme", "alice"), Principal("acme", "bob")
MARK = "Zqstatsecret"
STATISTICS = """
    SELECT s.starelid::regclass::text, a.attname,
           concat_ws(' ', s.stavalues1::text, s.stavalues2::text, s.stavalues3::text,
                     s.stavalues4::text, s.stavalues5::text)
    FROM pg_statistic s
    JOIN pg_attribute a ON a.attrelid = s.starelid AND a.attnum = s.staattnum
    WHERE s.starelid::regclass::text LIKE 'engram%'
"""


def _write(memory: Memory, url: str, principal: Principal, words: str) -> None:
    """Facts, documents and API keys of ``principal`` holding ``words`` (two of each: a
    column of one row gets no sampled values)."""
    user, keyring = principal.user_id, open_keyring(url=url)
    with keyring.store:
        for n in (1, 2):
            note = f"# diary {n}\n{words} {n}\n"
            memory.documents.write_text(principal, f"users/{user}/diary{n}.md", note)
            memory.remember(principal, f"My secret word {n} is {words}", key=f"word{n}")
            keyring.create(principal.tenant_id, user_id=user, label=f"{words}-laptop-{n}")


def _analyze(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def _statistics_holding(url: str, marker: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(STATISTICS).fetchall()
    return [(table, column) for table, column, values in rows if marker in (values or "")]


def _left_after_forget(url: str, *, others: bool) -> list[tuple[str, str]]:
    """The (table, column) statistics still holding alice's words after she was forgotten,
    with bob's rows left in every table (``others``) or with every table left empty."""
    with Memory.open(url=url, embedder="hash") as memory:
        _write(memory, url, ALICE, f"{MARK} my private note")
        if others:
            _write(memory, url, BOB, "Bob likes green tea")
        _analyze(url)  # what autovacuum's auto-analyze does on its own
        assert _statistics_holding(url, MARK)  # the probe sees them
        memory.forget(ALICE)
    return _statistics_holding(url, MARK)


def _require_clearing(url: str) -> None:
    """Skip before PostgreSQL 18: no role but a superuser can clear statistics there."""
    import psycopg

    with psycopg.connect(url) as conn:
        if conn.info.server_version < CLEAR_STATISTICS_SINCE:
            pytest.skip("clearing an emptied table's statistics needs PostgreSQL 18")


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "test-secret-0123456789abcdef")


def test_forget_leaves_no_erased_value_in_planner_statistics(postgres_url: str) -> None:
    """Bob's rows stay: ``ANALYZE`` samples the table again, without alice's values."""
    assert _left_after_forget(postgres_url, others=True) == []


def test_forget_clears_the_statistics_of_the_tables_it_empties(postgres_url: str) -> None:
    """No row left: ``ANALYZE`` samples none, so writes none, and the old ones must be
    cleared (documents and API keys here; the facts' table below)."""
    _require_clearing(postgres_url)
    left = _left_after_forget(postgres_url, others=False)
    assert [(table, column) for table, column in left if table != COLD_TABLE] == []


def test_forget_clears_the_statistics_of_an_emptied_fact_table(postgres_url: str) -> None:
    _require_clearing(postgres_url)
    left = _left_after_forget(postgres_url, others=False)
    assert [(table, column) for table, column in left if table == COLD_TABLE] == []
