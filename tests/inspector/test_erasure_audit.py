"""The erasure audit: one record per whole-user erasure, through the server or a library
call, counts only, each tenant's records apart (PostgreSQL: under row-level security)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import psycopg
import pytest
from fastapi.testclient import TestClient

from engram import Memory, Principal
from engram.backends.postgres._roles import role_url
from engram.config import AppRole
from engram.errors import BackendError, InvalidInputError
from engram.server.app import ServeConfig, create_app, open_app
from engram.server.auth import CredentialAuthenticator, open_keyring
from engram.stores.audit import ErasureLog, ErasureRecord, local_actor, open_audit

SECRET = "quokka-secret-text"
WHEN = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _record(tenant: str, user: str, facts: int = 1) -> ErasureRecord:
    return ErasureRecord(tenant, user, "egk_abc", WHEN, {"facts": facts, "threads": 0})


def _keeps_tenants_apart(log: ErasureLog) -> None:
    log.add(_record("acme", "alice", 3))
    log.add(_record("acme", "carol"))
    log.add(_record("acme2", "alice"))
    log.add(_record("ACME", "alice"))
    found = log.list("acme")
    assert [(r.user_id, r.counts["facts"]) for r in found] == [("carol", 1), ("alice", 3)]
    assert found[1].erased_at == WHEN and found[1].actor == "egk_abc"
    assert [r.user_id for r in log.list("acme2")] == ["alice"]
    assert log.list("nobody") == []
    assert len(log.list("acme", limit=1)) == 1


def test_the_home_log_keeps_tenants_apart(tmp_path: Path) -> None:
    with open_audit(tmp_path / ".engram") as log:
        _keeps_tenants_apart(log)
    with open_audit(tmp_path / ".engram") as log:  # it persists
        assert len(log.list("acme")) == 2


@pytest.mark.postgres
def test_the_postgres_log_is_under_row_level_security(postgres_url: str) -> None:
    with open_audit(url=postgres_url) as log:
        _keeps_tenants_apart(log)
    with psycopg.connect(role_url(postgres_url, AppRole()), autocommit=True) as conn:
        count = "SELECT count(*) FROM engram_erasures"
        assert conn.execute(count).fetchone() == (0,)  # no tenant set: nothing
        with conn.transaction():
            conn.execute("SELECT set_config('app.tenant_id', 'acme2', true)")
            assert conn.execute(count).fetchone() == (1,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    "INSERT INTO engram_erasures (tenant_id, user_id, actor, erased_at, counts)"
                    " VALUES ('acme', 'x', 'y', now(), '{}')"
                )


def test_rest_forget_of_a_user_is_audited_with_counts_only(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    alice = Principal("acme", "alice")
    with Memory.open(home, embedder="hash") as memory:
        memory.remember(alice, f"My locker code is {SECRET}", slot="locker")
        memory.remember(alice, "Alice sails on Sundays", slot="hobby")
    keyring = open_keyring(home=home)
    token = keyring.create("acme", user_id="alice", scopes=["read", "write", "erase"])
    app = open_app(ServeConfig(home=str(home), embedder="hash"))
    headers = {"Authorization": f"Bearer {token.token}"}
    with TestClient(app) as client:
        some = client.post("/v1/forget", json={"keys": ["nope"]}, headers=headers)
        assert some.status_code == 200
        with open_audit(home) as log:
            assert log.list("acme") == []  # erasing named facts is no user erasure
        whole = client.post("/v1/forget", json={}, headers=headers)
        assert whole.status_code == 200 and whole.json()["facts"]["keys"] == 2
    with open_audit(home) as log:
        (record,) = log.list("acme")
    assert (record.user_id, record.actor) == ("alice", token.record.key_id)
    assert record.counts["facts"] == 2 and record.counts["threads"] == 0
    assert SECRET not in json.dumps(dict(record.counts))
    assert SECRET.encode() not in (home / "memory.db").read_bytes()


# -- a library call of Memory.forget records the erasure too ---------------------------


def test_a_library_forget_of_a_user_is_recorded_once(tmp_path: Path) -> None:
    """The library's whole-user erasure is on record (who asked: ``library:<login>`` or
    the caller's ``actor``); erasing named facts is not; counts only, no content."""
    home = tmp_path / ".engram"
    alice, bob = Principal("acme", "alice"), Principal("acme", "bob")
    with Memory.open(home, embedder="hash") as memory:
        memory.remember(alice, f"My locker code is {SECRET}", slot="locker")
        hobby = memory.remember(alice, "Alice sails on Sundays", slot="hobby").key
        memory.remember(bob, "Bob rows on Mondays", slot="hobby")
        assert hobby is not None and memory.forget(alice, [hobby]).facts.keys == 1
        assert memory.erasure_log is not None and memory.erasure_log.list("acme") == []
        report = memory.forget(alice)
        memory.forget(bob, actor="ops-ticket-42")
    assert report.facts.keys == 1
    with open_audit(home) as log:  # what `engram erasures` and the server list
        bob_record, alice_record = log.list("acme")
    assert (alice_record.user_id, alice_record.actor) == ("alice", local_actor("library"))
    assert alice_record.actor.startswith("library")
    assert alice_record.counts["facts"] == 1 and alice_record.counts["versions"] == 1
    assert (bob_record.user_id, bob_record.actor) == ("bob", "ops-ticket-42")
    assert SECRET.encode() not in (home / "memory.db").read_bytes()


def test_an_actor_that_is_no_single_line_is_refused_before_anything_is_erased(
    tmp_path: Path,
) -> None:
    alice = Principal("acme", "alice")
    with Memory.open(tmp_path / ".engram", embedder="hash") as memory:
        hobby = memory.remember(alice, "Alice sails on Sundays", slot="hobby").key
        for actor in ("", "ops\nforged-line", 7):
            with pytest.raises(InvalidInputError):
                memory.forget(alice, actor=actor)  # type: ignore[arg-type]
        assert [r.key for r in memory.facts(alice)] == [hobby]
        assert memory.erasure_log is not None and memory.erasure_log.list("acme") == []


def test_an_erasure_whose_record_cannot_be_written_says_so(tmp_path: Path) -> None:
    """The user is erased all the same (erasure comes first); the caller is told the
    record is missing, with a typed error, instead of believing it was kept."""
    alice = Principal("acme", "alice")
    with Memory.open(tmp_path / ".engram", embedder="hash") as memory:
        memory.remember(alice, f"My locker code is {SECRET}", slot="locker")
        log = memory.erasure_log
        assert log is not None
        with (
            mock.patch.object(log, "add", side_effect=BackendError("disk full")),
            pytest.raises(BackendError, match="erased, but the erasure record was not written"),
        ):
            memory.forget(alice)
        assert memory.facts(alice) == []
        assert log.list("acme") == []


def test_the_server_records_a_rest_erasure_once_though_the_memory_records_too(
    tmp_path: Path,
) -> None:
    """An app built over an open memory and a log of its own: one record, naming the key."""
    home = tmp_path / ".engram"
    alice = Principal("acme", "alice")
    keyring = open_keyring(home=home)
    token = keyring.create("acme", user_id="alice", scopes=["read", "write", "erase"])
    with Memory.open(home, embedder="hash") as memory, open_audit(home) as log:
        memory.remember(alice, "Alice sails on Sundays", slot="hobby")
        app = create_app(memory, CredentialAuthenticator(keyring), audit=log)
        bearer = {"Authorization": f"Bearer {token.token}"}
        with TestClient(app) as client:
            done = client.post("/v1/forget", json={}, headers=bearer)
            assert done.status_code == 200
        (record,) = log.list("acme")
    assert record.actor == token.record.key_id


@pytest.mark.postgres
def test_a_library_forget_on_postgres_is_recorded_under_the_tenants_policy(
    postgres_url: str,
) -> None:
    """As the admin (the log set up with the tiers) and as the application role's own
    URL: each erasure on record in its tenant, invisible to another tenant."""
    alice, other = Principal("acme", "alice"), Principal("beta", "alice")
    with Memory.open(url=postgres_url, embedder="hash") as memory:
        memory.remember(alice, "Alice sails on Sundays", slot="hobby")
        memory.forget(alice, actor="admin-run")
    with Memory.open(url=role_url(postgres_url, AppRole()), admin=False) as memory:
        memory.remember(other, "Alice of beta rows", slot="hobby")
        memory.forget(other)
        assert memory.erasure_log is not None
        (beta,) = memory.erasure_log.list("beta")
    with open_audit(url=postgres_url) as log:
        (acme,) = log.list("acme")
    assert (acme.user_id, acme.actor, acme.counts["facts"]) == ("alice", "admin-run", 1)
    assert (beta.user_id, beta.actor) == ("alice", local_actor("library"))
