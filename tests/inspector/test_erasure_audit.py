"""The erasure audit: one record per whole-user erasure through the server, counts only,
each tenant's records apart (PostgreSQL: under row-level security)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from engram import Memory, Principal
from engram.backends.postgres._roles import role_url
from engram.config import AppRole
from engram.server.app import ServeConfig, open_app
from engram.server.auth import open_keyring
from engram.stores.audit import ErasureLog, ErasureRecord, open_audit

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
