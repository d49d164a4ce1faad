"""Row-level security of the PostgreSQL document store, checked as the application role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from engram import BackendError, ConfigError, Principal
from engram.backends.files import FileDocumentStore
from engram.backends.postgres.documents import PostgresDocumentStore
from engram.stores.documents import sync

pytestmark = pytest.mark.postgres

ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")


@pytest.fixture
def pg(app_url: str) -> Iterator[PostgresDocumentStore]:
    with PostgresDocumentStore(app_url, max_size=1) as store:
        store.write_text(ALICE, "acme.md", "# Acme\n\nacme plans\n")
        store.write_text(BOB, "globex.md", "# Globex\n\nglobex plans\n")
        store.write_text(BOB, "more/globex2.md", "globex again\n")
        yield store


def test_the_store_runs_as_a_role_that_rls_applies_to(pg: PostgresDocumentStore) -> None:
    with pg.transaction(ALICE) as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row == ("engram_docs_app", False, False)


def test_reading_another_tenants_rows_returns_nothing(pg: PostgresDocumentStore) -> None:
    with pg.transaction(ALICE) as conn:
        docs = conn.execute("SELECT count(*) FROM engram_documents WHERE tenant_id = 'globex'")
        chunks = conn.execute(
            "SELECT count(*) FROM engram_document_chunks WHERE tenant_id = 'globex'"
        )
        assert docs.fetchone() == (0,) and chunks.fetchone() == (0,)
    with pg.transaction(BOB) as conn:
        docs = conn.execute("SELECT count(*) FROM engram_documents WHERE tenant_id = 'globex'")
        assert docs.fetchone() == (2,)


def test_inserting_a_row_for_another_tenant_fails_on_the_policy(
    pg: PostgresDocumentStore,
) -> None:
    with pytest.raises(BackendError) as caught, pg.transaction(ALICE) as conn:
        conn.execute(
            "INSERT INTO engram_documents (tenant_id, path, content, digest, size) "
            "VALUES ('globex', 'planted.md', 'x', 'd', 1)"
        )
    assert isinstance(caught.value.__cause__, psycopg.errors.InsufficientPrivilege)
    assert "row-level security policy" in str(caught.value)
    with pg.transaction(BOB) as conn:
        assert conn.execute("SELECT path FROM engram_documents ORDER BY path").fetchall() == [
            ("globex.md",),
            ("more/globex2.md",),
        ]


def test_a_query_without_tenant_predicate_sees_only_the_tenant(
    pg: PostgresDocumentStore,
) -> None:
    with pg.transaction(ALICE) as conn:
        assert conn.execute("SELECT tenant_id, path FROM engram_documents").fetchall() == [
            ("acme", "acme.md")
        ]
        assert conn.execute("SELECT DISTINCT tenant_id FROM engram_document_chunks").fetchall() == [
            ("acme",)
        ]
        updated = conn.execute("UPDATE engram_documents SET content = 'pwned'").rowcount
        deleted = conn.execute("DELETE FROM engram_document_chunks WHERE true").rowcount
        assert (updated, deleted) == (1, 1)
    assert pg.read_text(BOB, "globex.md") == "# Globex\n\nglobex plans\n"


def test_a_pooled_connection_never_carries_the_tenant_over(pg: PostgresDocumentStore) -> None:
    with pg.transaction(ALICE):
        pass
    pool = pg._connections()
    with pool.connection() as conn:  # the same single pooled connection, no tenant set
        assert conn.execute("SELECT current_setting('app.tenant_id', true)").fetchone() in (
            ("",),
            (None,),
        )
        assert conn.execute("SELECT count(*) FROM engram_documents").fetchone() == (0,)


def test_a_role_that_bypasses_rls_is_refused(postgres_url: str, app_url: str) -> None:
    with pytest.raises(ConfigError, match="BYPASSRLS"):
        PostgresDocumentStore(postgres_url).list(ALICE)


def test_setup_is_idempotent(postgres_url: str, app_url: str) -> None:
    from engram.backends.postgres.documents import AppRole, setup

    assert setup(postgres_url, AppRole("engram_docs_app", "app-secret")) == app_url
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute(
            "SELECT version FROM engram_documents_migrations ORDER BY version"
        ).fetchall()
        forced = conn.execute(
            "SELECT relname FROM pg_class WHERE relrowsecurity AND relforcerowsecurity "
            "AND relname LIKE 'engram_document%' ORDER BY relname"
        ).fetchall()
    assert versions == [(1,), (2,)]
    assert forced == [("engram_document_chunks",), ("engram_documents",)]


def test_sync_upserts_changed_files_and_removes_deleted(
    tmp_path: Path, pg: PostgresDocumentStore
) -> None:
    files = FileDocumentStore(home=tmp_path / ".engram")
    files.init(ALICE)
    files.write(ALICE, "research/rates.md", "# Rates\n\nhawkish\n", {"title": "Rates"})
    first = sync(files, pg, ALICE)
    assert set(first.upserted) == {i.path for i in files.list(ALICE)}
    assert len(first.upserted) == 7 and first.unchanged == 0
    assert first.deleted == ("acme.md",)
    (files.root(ALICE) / "research/rates.md").write_text("# Rates\n\ndovish now\n")
    files.delete(ALICE, "PROGRESS.md")
    second = sync(files, pg, ALICE)
    assert second.upserted == ("research/rates.md",)
    assert second.deleted == ("PROGRESS.md",)
    assert second.unchanged == len(files.list(ALICE)) - 1
    assert [h.path for h in pg.search(ALICE, "dovish")] == ["research/rates.md"]
    assert pg.list(BOB) and sync(files, pg, ALICE).upserted == ()
    files.close()


def _relation_bytes(admin_url: str) -> bytes:
    """Every table, index and TOAST file of the database, as on disk after a checkpoint."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        rows = conn.execute(
            "SELECT pg_read_binary_file(pg_relation_filepath(oid)) FROM pg_class "
            "WHERE relkind IN ('r', 'i', 't') AND pg_relation_filepath(oid) IS NOT NULL "
            "AND pg_relation_size(oid) > 0"
        ).fetchall()
    return b"".join(row[0] for row in rows)


def test_compact_removes_deleted_documents_from_every_file(
    pg: PostgresDocumentStore, postgres_url: str
) -> None:
    secret = b"zanzibarquokka"
    pg.write_text(ALICE, "secret.md", "# Secret\n\nzanzibarquokka account 4411\n")
    pg.delete(ALICE, "secret.md")
    assert secret in _relation_bytes(postgres_url)  # dead rows stay until compaction
    assert pg.compact()
    assert secret not in _relation_bytes(postgres_url)
    assert pg.read_text(BOB, "globex.md") == "# Globex\n\nglobex plans\n"


def test_setup_brings_digests_and_the_keyword_index_of_an_older_schema_up_to_date(
    postgres_url: str, app_url: str
) -> None:
    """Digests an earlier version stored (of the parsed body and metadata) become the
    digests of the text, and the keyword index takes paragraphs past 1 MB of words."""
    from engram.backends.postgres.documents import AppRole, setup
    from engram.stores.documents import digest_of

    text = "---\n# a comment\ntitle: R\n---\n# R\n\nbody\n"
    with PostgresDocumentStore(app_url) as store:
        store.write_text(ALICE, "r.md", text)
    with psycopg.connect(postgres_url, autocommit=True) as admin:  # as the older version left it
        admin.execute("UPDATE engram_documents SET digest = 'parsed'")
        admin.execute("ALTER TABLE engram_document_chunks DROP COLUMN tsv")
        admin.execute(
            "ALTER TABLE engram_document_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
            "(to_tsvector('english', heading) || to_tsvector('english', body)) STORED"
        )
        admin.execute("DELETE FROM engram_documents_migrations WHERE version >= 2")
    setup(postgres_url, AppRole("engram_docs_app", "app-secret"))
    with PostgresDocumentStore(app_url) as store:
        [info] = store.list(ALICE)
        assert info.digest == digest_of(text)
        store.write_text(ALICE, "r.md", text + "more\n", expected=info.digest)
        store.write_text(ALICE, "big.md", " ".join(f"w{n}x" for n in range(200_000)))
        assert [h.path for h in store.search(ALICE, "w7x", mode="keyword")] == ["big.md"]
