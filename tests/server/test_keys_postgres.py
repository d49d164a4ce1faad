"""API keys on PostgreSQL: the same keyring, with row-level security on the tenant."""

from __future__ import annotations

import psycopg
import pytest

from engram.backends.postgres._roles import role_url
from engram.config import AppRole
from engram.errors import AuthenticationError, ConfigError
from engram.server.auth import open_authenticator, open_keyring
from engram.server.keys import SECRET_ENV


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "test-secret-0123456789abcdef")


@pytest.mark.usefixtures("secret")
def test_keys_on_postgres_authenticate_and_revoke(postgres_url: str) -> None:
    keyring = open_keyring(url=postgres_url)
    with keyring.store:
        alice = keyring.create("acme", user_id="alice", scopes=["read"])
        beta = keyring.create("beta")
        with open_authenticator(url=postgres_url) as auth:
            assert auth.authenticate(alice.token).principal().user_id == "alice"
            assert auth.authenticate(beta.token).tenant_id == "beta"
            keyring.revoke("acme", alice.record.key_id)
            with pytest.raises(AuthenticationError):
                auth.authenticate(alice.token)
            forged = ".".join(
                [alice.record.key_id, beta.token.split(".")[1], alice.token.split(".")[2]]
            )
            with pytest.raises(AuthenticationError):
                auth.authenticate(forged)
        assert [r.key_id for r in keyring.list("beta")] == [beta.record.key_id]


@pytest.mark.usefixtures("secret")
def test_row_level_security_hides_other_tenants_keys(postgres_url: str) -> None:
    keyring = open_keyring(url=postgres_url)
    with keyring.store:
        keyring.create("acme")
        keyring.create("beta")
    app = role_url(postgres_url, AppRole())
    with psycopg.connect(app, autocommit=True) as conn:
        count = "SELECT count(*), count(DISTINCT tenant_id) FROM engram_api_keys"
        assert conn.execute(count).fetchone() == (0, 0)  # no tenant set: nothing
        with conn.transaction():
            conn.execute("SELECT set_config('app.tenant_id', 'acme', true)")
            assert conn.execute(count).fetchone() == (1, 1)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    "INSERT INTO engram_api_keys (tenant_id, key_id, scopes, digest, created_at)"
                    " VALUES ('beta', 'egk_x', '{read}', 'd', now())"
                )


def test_postgres_keys_need_a_server_secret(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    with pytest.raises(ConfigError, match=SECRET_ENV):
        open_keyring(url=postgres_url)
