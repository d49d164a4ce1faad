"""API keys and grants: a credential yields exactly what it was created for, nothing more.

Every refusal (unknown key, wrong secret, another tenant's id, revoked, expired,
malformed) carries the same message, and the token itself is never stored.
"""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram import AccessDeniedError, InvalidInputError, NotFoundError, Principal
from engram.errors import AuthenticationError, ConfigError
from engram.server.auth import Grant, open_authenticator, open_keyring
from engram.server.keys import REFUSED, SECRET_ENV, SECRET_FILE, Keyring, server_secret
from engram.stores.keys import open_keys


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    return tmp_path / ".engram"


def _refused(authenticate: object, token: str) -> str:
    with pytest.raises(AuthenticationError) as caught:
        authenticate(token)  # type: ignore[operator]
    return str(caught.value)


def test_a_key_grants_its_tenant_user_and_scopes(home: Path) -> None:
    new = open_keyring(home=home).create("acme", user_id="alice", scopes=["read"])
    grant = open_authenticator(home=str(home)).authenticate(new.token)
    assert grant == Grant("acme", "alice", frozenset({"read"}), new.record.key_id, grant.expires_at)
    assert new.token.startswith(new.record.key_id + ".")
    assert grant.principal() == Principal("acme", "alice")


def test_the_token_is_never_stored_only_its_keyed_hash(home: Path) -> None:
    new = open_keyring(home=home).create("acme")
    secret_part = new.token.rsplit(".", 1)[1]
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert secret_part.encode() not in stored
    assert new.record.key_id.encode() in stored  # the visible id is what identifies it
    assert stat.S_IMODE((home / SECRET_FILE).stat().st_mode) == 0o600


def test_every_refusal_reads_the_same(home: Path) -> None:
    keyring = open_keyring(home=home)
    good = keyring.create("acme", user_id="alice").token
    other = keyring.create("beta", user_id="alice").token
    key_id, tenant, secret = good.split(".")
    _, beta_tenant, _ = other.split(".")
    flipped = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    attempts = [
        f"{key_id}.{tenant}.{flipped}",  # wrong secret
        f"egk_000000000000.{tenant}.{secret}",  # unknown id
        f"{key_id}.{beta_tenant}.{secret}",  # the id under another tenant
        f"{key_id}.{tenant}",  # truncated
        f"{key_id}.{tenant}.{secret}.x",
        good.upper(),
        good + " ",
        "",
        "Bearer " + good,
        "egk_\x00.AAAA.BBBB",
        "egk_x.%%%%.y",
        "not-a-key",
    ]
    authenticate = open_authenticator(home=str(home)).authenticate
    messages = {_refused(authenticate, token) for token in attempts}
    assert messages == {REFUSED}
    assert authenticate(good).tenant_id == "acme"


def test_another_server_secret_verifies_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = open_keyring(home=home).create("acme").token
    monkeypatch.setenv(SECRET_ENV, "a-different-secret-of-enough-length")
    assert _refused(open_authenticator(home=str(home)).authenticate, token) == REFUSED


def test_a_revoked_key_is_refused_from_then_on(home: Path) -> None:
    keyring = open_keyring(home=home)
    new = keyring.create("acme", user_id="alice")
    keep = keyring.create("acme", user_id="alice")
    authenticate = open_authenticator(home=str(home)).authenticate
    assert authenticate(new.token).key_id == new.record.key_id
    keyring.revoke("acme", new.record.key_id)
    assert _refused(authenticate, new.token) == REFUSED
    assert authenticate(keep.token).key_id == keep.record.key_id
    with pytest.raises(NotFoundError):
        keyring.revoke("acme", new.record.key_id)  # already revoked
    with pytest.raises(NotFoundError):
        keyring.revoke("beta", keep.record.key_id)  # another tenant cannot revoke it
    listed = {r.key_id: r.revoked_at is not None for r in keyring.list("acme")}
    assert listed == {new.record.key_id: True, keep.record.key_id: False}
    assert keyring.list("beta") == []


def test_an_expired_key_is_refused(home: Path) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    with open_keys(home) as store:
        keyring = Keyring(store, server_secret(home), clock=lambda: now[0])
        new = keyring.create("acme", expires_at=now[0] + timedelta(hours=1))
        assert keyring.verify(new.token).key_id == new.record.key_id
        now[0] += timedelta(hours=1)
        with pytest.raises(AuthenticationError, match=REFUSED):
            keyring.verify(new.token)
        with pytest.raises(InvalidInputError):
            keyring.create("acme", expires_at=now[0] - timedelta(seconds=1))


@pytest.mark.parametrize(
    ("tenant", "user", "scopes"),
    [
        ("", None, ["read"]),
        ("a/b", None, ["read"]),
        ("acme", "x y", ["read"]),
        ("acme", None, ["root"]),
        ("acme", None, []),
    ],
)
def test_bad_bindings_are_refused_at_creation(
    home: Path, tenant: str, user: str | None, scopes: list[str]
) -> None:
    with pytest.raises(InvalidInputError):
        open_keyring(home=home).create(tenant, user_id=user, scopes=scopes)


def test_a_user_bound_grant_acts_only_as_its_user() -> None:
    grant = Grant("acme", "alice", frozenset({"read"}), "egk_1", None)
    assert grant.principal() == grant.principal("alice") == Principal("acme", "alice")
    for other in ("bob", "Alice", "alice ", "alic"):
        with pytest.raises(AccessDeniedError):
            grant.principal(other)


def test_a_tenant_grant_names_a_user_of_its_own_tenant_only() -> None:
    grant = Grant("acme", None, frozenset({"read"}), "egk_1", None)
    assert grant.principal("bob") == Principal("acme", "bob")
    with pytest.raises(AccessDeniedError):
        grant.principal()
    with pytest.raises(InvalidInputError):
        grant.principal("../beta")


def test_scopes_are_required_and_admin_implies_them() -> None:
    reader = Grant("acme", "alice", frozenset({"read"}), "egk_1", None)
    reader.require("read")
    for scope in ("write", "erase", "admin"):
        with pytest.raises(AccessDeniedError):
            reader.require(scope)
    admin = Grant("acme", "alice", frozenset({"admin"}), "egk_2", None)
    for scope in ("read", "write", "erase", "admin"):
        admin.require(scope)
    with pytest.raises(InvalidInputError):
        admin.require("superuser")


def test_the_home_secret_is_made_once_and_kept(home: Path) -> None:
    first = server_secret(home)
    assert server_secret(home) == first and len(first) == 32
    assert not [p for p in home.iterdir() if p.name.startswith(".")]  # no temporary left


def test_short_env_secret_and_postgres_without_secret_are_config_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError):
        server_secret(None)
    monkeypatch.setenv(SECRET_ENV, "short")
    with pytest.raises(ConfigError):
        server_secret(None)


def test_keys_of_the_same_id_in_two_homes_are_independent(tmp_path: Path) -> None:
    a = open_keyring(home=tmp_path / "a").create("acme").token
    assert _refused(open_authenticator(home=str(tmp_path / "b")).authenticate, a) == REFUSED
    assert os.path.exists(tmp_path / "b" / SECRET_FILE)
