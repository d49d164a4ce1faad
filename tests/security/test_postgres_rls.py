"""Row-level security of every engram table on PostgreSQL, checked as the application role.

The tiers are filled through their own APIs as the application role for two tenants
(ids that share a prefix and differ only by case as well as unrelated ones); then raw
SQL, run as that role with one tenant's setting and no tenant predicate at all, must
see only that tenant's rows in every table, and writes for another tenant must fail
on the policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from engram import ConflictError, Principal
from engram.config import AppRole
from engram.recall import HashEmbedder
from engram.stores.hot import Threads, open_checkpointer, setup_checkpointer, thread_config

pytestmark = pytest.mark.postgres

ROLE = AppRole("engram_rls_app", "rls-secret")
ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")
MALLORY = Principal("acme2", "alice")  # shares a prefix with acme and the same user id
CASE = Principal("ACME", "alice")  # differs from acme only by case
PRINCIPALS = (ALICE, BOB, MALLORY, CASE)

TENANT_TABLES = {
    "engram_cold_memories": "tenant",
    "engram_documents": "tenant_id",
    "engram_document_chunks": "tenant_id",
    "engram_thread_owners": "tenant_id",
    "engram_publications": "tenant_id",
}
THREAD_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
VERSION_TABLES = {
    "engram_cold_migrations",
    "engram_documents_migrations",
    "engram_hot_migrations",
    "checkpoint_migrations",
}


@dataclass(frozen=True)
class Database:
    admin_url: str
    app_url: str


def _checkpoint(n: int, text: str) -> dict[str, Any]:
    return {
        "v": 4,
        "id": f"1ef4f797-8335-6428-8001-{n:012d}",
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"note": text, "messages": [text]},
        "channel_versions": {"note": "1", "messages": "1"},
        "versions_seen": {},
    }


def _fill_hot(url: str) -> None:
    with open_checkpointer(url, encryption_key=None) as saver:
        for n, who in enumerate(PRINCIPALS):
            config = thread_config(f"thread-{who.tenant_id}", who, checkpoint_ns="")
            state = _checkpoint(n, f"{who.tenant_id} state")
            saved = saver.put(config, state, {}, {"messages": "1"})  # type: ignore[arg-type]
            # as LangGraph does: the run's config, at the checkpoint just written
            at = thread_config(**saved["configurable"], principal=who)
            saver.put_writes(at, [("note", f"{who.tenant_id} pending")], "task-1")


def _fill_cold(url: str) -> None:
    from engram.stores.cold import open_store

    with open_store(url, embedder=HashEmbedder()) as store:
        for who in PRINCIPALS:
            store.remember(who, f"{who.tenant_id} prefers a conservative risk profile")


def _fill_documents(url: str) -> None:
    from engram.backends.postgres.documents import PostgresDocumentStore

    with PostgresDocumentStore(url, embedder=HashEmbedder()) as store:
        for who in PRINCIPALS:
            store.write_text(who, f"notes/{who.tenant_id}.md", f"# {who.tenant_id}\n\nplans\n")


def _fill_outbox(url: str) -> None:
    from engram.backends.postgres.outbox import PostgresPublicationLedger

    ledger = PostgresPublicationLedger(url)
    for who in PRINCIPALS:
        ledger.publish(who, f"thread-{who.tenant_id}", f"# {who.tenant_id} report\n", "someone")


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    from engram.backends.postgres import cold, documents

    app_url = setup_checkpointer(postgres_url, ROLE)
    assert cold.setup(postgres_url, ROLE) == app_url == documents.setup(postgres_url, ROLE)
    _fill_hot(app_url)
    _fill_cold(app_url)
    _fill_documents(app_url)
    _fill_outbox(app_url)
    yield Database(postgres_url, app_url)


@pytest.fixture
def as_app(database: Database) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    with psycopg.connect(database.app_url) as conn:
        yield conn


def _act_for(conn: psycopg.Connection[tuple[Any, ...]], tenant: str | None) -> None:
    conn.execute("SELECT set_config('app.tenant_id', coalesce(%s, ''), true)", (tenant,))


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {str(r[0]) for r in rows}


def _admin_count(url: str, table: str, tenant: str) -> int:
    """Rows of ``tenant`` in ``table``, counted as the superuser (RLS bypassed)."""
    if table in TENANT_TABLES:
        where = f"{TENANT_TABLES[table]} = %s"
    else:
        where = "thread_id IN (SELECT thread_id FROM engram_thread_owners WHERE tenant_id = %s)"
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", (tenant,)).fetchone()
    assert row is not None
    return int(row[0])


def test_the_app_role_is_no_superuser_bypasses_nothing_and_owns_nothing(
    as_app: psycopg.Connection[tuple[Any, ...]],
) -> None:
    row = as_app.execute(
        "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    owned = as_app.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND pg_has_role(c.relowner, 'USAGE')"
    ).fetchone()
    assert row == (ROLE.name, False, False)
    assert owned == (0,)


def test_every_table_has_forced_rls_or_holds_no_tenant_data(database: Database) -> None:
    tables = _tables(database.admin_url)
    assert set(TENANT_TABLES) | set(THREAD_TABLES) | VERSION_TABLES == tables
    with psycopg.connect(database.admin_url) as conn:
        forced = {
            str(r[0])
            for r in conn.execute(
                "SELECT relname FROM pg_class WHERE relrowsecurity AND relforcerowsecurity"
            )
        }
        writable = {
            t
            for t in VERSION_TABLES
            for p in ("INSERT", "UPDATE", "DELETE")
            if conn.execute("SELECT has_table_privilege(%s, %s, %s)", (ROLE.name, t, p)).fetchone()
            == (True,)
        }
    assert forced == tables - VERSION_TABLES
    assert writable == set()  # version tables: the role may only read them


@pytest.mark.parametrize("me", PRINCIPALS, ids=lambda p: p.tenant_id)
def test_a_query_without_tenant_predicate_returns_only_the_tenants_rows(
    database: Database, as_app: psycopg.Connection[tuple[Any, ...]], me: Principal
) -> None:
    seen: dict[str, tuple[int, int]] = {}
    with as_app.transaction():
        _act_for(as_app, me.tenant_id)
        for table in (*TENANT_TABLES, *THREAD_TABLES):
            row = as_app.execute(f"SELECT count(*) FROM {table}").fetchone()
            assert row is not None
            seen[table] = (int(row[0]), _admin_count(database.admin_url, table, me.tenant_id))
        rows = as_app.execute("SELECT * FROM checkpoints").fetchall()
    assert all(mine == expected and mine > 0 for mine, expected in seen.values()), seen
    assert {r[0] for r in rows} == {f"thread-{me.tenant_id}"}
    others = [_admin_count(database.admin_url, t, o.tenant_id) for t in seen for o in PRINCIPALS]
    assert sum(others) > sum(
        n for n, _ in seen.values()
    )  # the other tenants' rows are there, just not visible


def test_with_no_tenant_set_every_table_is_empty(
    as_app: psycopg.Connection[tuple[Any, ...]],
) -> None:
    counts = {}
    for table in (*TENANT_TABLES, *THREAD_TABLES):
        row = as_app.execute(f"SELECT count(*) FROM {table}").fetchone()
        counts[table] = row[0] if row else None
    assert set(counts.values()) == {0}, counts


def _refused(
    conn: psycopg.Connection[tuple[Any, ...]], tenant: str, statement: str, *params: Any
) -> None:
    refused = pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security")
    with refused, conn.transaction():
        _act_for(conn, tenant)
        conn.execute(statement, params)


COLD_ROW = (
    "INSERT INTO engram_cold_memories (tenant, id, ns, key, value, text, tags, source, "
    "sensitivity, importance, created_at, recorded_at, valid_from, provenance) VALUES "
    "(%s, 'planted', %s, 'k', '{}', 'planted', '{}', 'user', 'normal', 0.5, now(), now(), "
    "now(), '{}')"
)


def test_inserting_a_row_for_another_tenant_fails_on_the_policy(
    database: Database, as_app: psycopg.Connection[tuple[Any, ...]]
) -> None:
    _refused(as_app, "acme", COLD_ROW, "globex", "globex\x1fbob")
    _refused(
        as_app,
        "acme",
        "INSERT INTO engram_documents (tenant_id, path, content, digest, size) "
        "VALUES ('globex', 'planted.md', 'x', 'd', 1)",
    )
    _refused(
        as_app,
        "acme",
        "INSERT INTO engram_thread_owners (thread_id, tenant_id, user_id) "
        "VALUES ('planted', 'globex', 'bob')",
    )
    for table, columns, values in (
        ("checkpoints", "thread_id, checkpoint_id, checkpoint", "%s, 'planted', '{}'"),
        ("checkpoint_blobs", "thread_id, channel, version, type", "%s, 'c', 'v', 't'"),
        (
            "checkpoint_writes",
            "thread_id, checkpoint_id, task_id, idx, channel, blob",
            "%s, 'planted', 't', 0, 'c', ''",
        ),
    ):
        statement = f"INSERT INTO {table} ({columns}) VALUES ({values})"
        _refused(as_app, "acme", statement, "thread-globex")  # another tenant's thread
        _refused(as_app, "acme", statement, "thread-nobody")  # a thread with no owner
    assert _admin_count(database.admin_url, "engram_cold_memories", "globex") == 1


def test_updating_rows_into_or_of_another_tenant_fails_or_finds_nothing(
    database: Database, as_app: psycopg.Connection[tuple[Any, ...]]
) -> None:
    _refused(as_app, "acme", "UPDATE engram_cold_memories SET tenant = 'globex'")
    _refused(as_app, "acme", "UPDATE engram_documents SET tenant_id = 'globex'")
    _refused(as_app, "acme", "UPDATE engram_thread_owners SET tenant_id = 'globex'")
    _refused(as_app, "acme", "UPDATE checkpoints SET thread_id = 'thread-globex'")
    with as_app.transaction():
        _act_for(as_app, "acme")
        changed = [
            as_app.execute(f"UPDATE {t} SET thread_id = thread_id").rowcount for t in THREAD_TABLES
        ]
        deleted = as_app.execute(
            "DELETE FROM engram_cold_memories WHERE tenant = 'globex'"
        ).rowcount
    assert deleted == 0 and all(n > 0 for n in changed)  # acme's own rows, nobody else's
    assert _admin_count(database.admin_url, "engram_cold_memories", "globex") == 1


def test_a_checkpoint_on_another_tenants_thread_is_refused_by_the_saver(
    database: Database,
) -> None:
    with open_checkpointer(database.app_url, encryption_key=None) as saver:
        config = thread_config("thread-globex", ALICE, checkpoint_ns="")
        with pytest.raises(ConflictError, match="already in use"):
            saver.put(config, _checkpoint(99, "hijack"), {}, {})  # type: ignore[arg-type]
        assert saver.get_tuple(config) is None  # another tenant's thread reads as none
        assert saver.get_tuple(thread_config("thread-acme", ALICE)) is not None
    assert _admin_count(database.admin_url, "checkpoints", "globex") == 1


def test_admin_paths_under_rls(database: Database) -> None:
    """Listing without a principal sees only the scoped tenant (none: nothing); erasing
    a user runs in that user's tenant and leaves every other tenant's threads."""
    from engram import tenant_scope

    with open_checkpointer(database.app_url, encryption_key=None) as saver:
        threads = Threads(saver)
        assert threads.list_threads() == []
        with tenant_scope("acme"):
            assert [t.thread_id for t in threads.list_threads()] == ["thread-acme"]
        assert threads.delete_user_threads(ALICE) == ["thread-acme"]
    with open_checkpointer(database.admin_url, encryption_key=None) as saver:
        listed = {t.thread_id for t in Threads(saver).list_threads()}
    assert listed == {f"thread-{p.tenant_id}" for p in PRINCIPALS if p != ALICE}


def test_memory_open_runs_every_tier_as_the_app_role(postgres_url: str) -> None:
    from engram import Memory

    with Memory.open(url=postgres_url, app_role=ROLE, embedder=HashEmbedder()) as memory:
        memory.remember(ALICE, "Prefers a conservative risk profile", slot="risk")
        memory.remember(BOB, "Prefers an aggressive risk profile", slot="risk")
        recalled = memory.recall(ALICE, "risk profile").text
        users = {
            _current_user(memory.store.backend.pool.connection()),  # type: ignore[attr-defined]
            _current_user(memory.documents._connections().connection()),  # type: ignore[attr-defined]
            str(memory.checkpointer.conn.execute("SELECT current_user").fetchone()["current_user"]),  # type: ignore[attr-defined]
        }
    assert users == {ROLE.name}
    assert "conservative" in recalled and "aggressive" not in recalled


def _current_user(pooled: Any) -> str:
    with pooled as conn:
        row = conn.execute("SELECT current_user").fetchone()
    return str(row[0])


def _graph() -> Any:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("inc", lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    return builder


def test_a_graph_runs_as_the_app_role_and_another_tenant_cannot_take_its_thread(
    database: Database,
) -> None:
    with open_checkpointer(database.app_url, encryption_key=None) as saver:
        graph = _graph().compile(checkpointer=saver)
        assert graph.invoke({"n": 1}, thread_config("run-1", ALICE))["n"] == 2
        assert graph.get_state(thread_config("run-1", ALICE)).values == {"n": 2}
        assert graph.get_state(thread_config("run-1", BOB)).values == {}  # reads as no thread
        with pytest.raises(ConflictError, match="already in use"):
            graph.invoke({"n": 40}, thread_config("run-1", BOB))
        assert graph.get_state(thread_config("run-1", ALICE)).values == {"n": 2}
    assert _admin_count(database.admin_url, "checkpoints", "globex") == 1  # only bob's first


def test_the_async_saver_scopes_reads_and_refuses_another_tenants_thread(
    database: Database,
) -> None:
    import asyncio

    from engram.stores.hot import aopen_checkpointer

    async def run() -> tuple[Any, Any, list[Any]]:
        async with aopen_checkpointer(database.app_url, encryption_key=None) as saver:
            mine = await saver.aget_tuple(thread_config("thread-globex", BOB))
            theirs = await saver.aget_tuple(thread_config("thread-globex", ALICE))
            listed = [t async for t in saver.alist(thread_config("thread-acme", BOB))]
            with pytest.raises(ConflictError):
                config = thread_config("thread-globex", ALICE, checkpoint_ns="")
                await saver.aput(config, _checkpoint(98, "hijack"), {}, {})  # type: ignore[arg-type]
            return mine, theirs, listed

    mine, theirs, listed = asyncio.run(run())
    assert mine is not None and mine.checkpoint["channel_values"]["note"] == "globex state"
    assert theirs is None and listed == []


def test_thread_methods_given_the_owner_find_its_thread_as_the_app_role(
    database: Database,
) -> None:
    """Under row-level security a method given a principal acts for that principal's
    tenant: the owner finds their own thread (history, get, diff, prune, fork, sizes)
    with no tenant_scope of the caller's, and another tenant's user still finds none."""
    import asyncio

    from engram.errors import NotFoundError
    from engram.stores.hot import AsyncThreads, aopen_checkpointer

    with open_checkpointer(database.app_url, encryption_key=None) as saver:
        graph = _graph().compile(checkpointer=saver)
        graph.invoke({"n": 1}, thread_config("run-1", ALICE))
        graph.invoke({"n": 5}, thread_config("run-1", ALICE))
        threads = Threads(saver)
        history = threads.history("run-1", ALICE)
        assert len(history) >= 4 and threads.get("run-1", principal=ALICE) is not None
        oldest = history[-1].checkpoint_id
        assert threads.diff("run-1", oldest, principal=ALICE) is not None
        assert threads.fork("run-1", history[0].checkpoint_id, "run-2", ALICE).thread_id == "run-2"
        assert {s.thread_id for s in threads.sizes(principal=ALICE)} >= {"run-1", "run-2"}
        assert threads.prune("run-1", 1, principal=ALICE).deleted_checkpoints >= 1
        with pytest.raises(NotFoundError):
            threads.history("run-1", BOB)

    async def run() -> int:
        async with aopen_checkpointer(database.app_url, encryption_key=None) as saver:
            return len(await AsyncThreads(saver).history("run-1", ALICE))

    assert asyncio.run(run()) >= 1
