"""Forgetting a user deletes the API keys bound to that user: none signs in again, and the
key table keeps no byte of them. Keys of other users, tenant-wide keys and another
tenant's user of the same name are untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Memory, Principal
from engram.errors import AuthenticationError
from engram.server.auth import open_authenticator, open_keyring
from engram.server.keys import SECRET_ENV, NewKey
from engram.stores.keys import home_keys, open_keys

ALICE = Principal("acme", "alice")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    return tmp_path / ".engram"


def _keys(**where: str) -> dict[str, NewKey]:
    keyring = open_keyring(**where)  # type: ignore[arg-type]
    with keyring.store:
        made = {
            "alice": keyring.create("acme", user_id="alice", label="alice-laptop-7f3a"),
            "alice_revoked": keyring.create("acme", user_id="alice", label="alice-old-9c1e"),
            "bob": keyring.create("acme", user_id="bob"),
            "tenant": keyring.create("acme"),
            "beta_alice": keyring.create("beta", user_id="alice"),
        }
        keyring.revoke("acme", made["alice_revoked"].record.key_id)
    return made


def _signs_in(token: str, **where: str) -> bool:
    with open_authenticator(**where) as auth:  # type: ignore[arg-type]
        try:
            auth.authenticate(token)
        except AuthenticationError:
            return False
    return True


def _stored(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_forget_deletes_the_users_keys_and_no_others(home: Path) -> None:
    made = _keys(home=str(home))
    with Memory.open(home, embedder="hash") as memory:
        memory.remember(ALICE, "Alice prefers the aisle seat")
        report = memory.forget(ALICE)
    assert report.participants["api_keys"] == {"keys": 2}
    assert not _signs_in(made["alice"].token, home=str(home))
    for other in ("bob", "tenant", "beta_alice"):
        assert _signs_in(made[other].token, home=str(home)), other
    left = {r.key_id for r in open_keys(home).list("acme")}
    assert left == {made["bob"].record.key_id, made["tenant"].record.key_id}
    stored = _stored(home)
    for gone in ("alice", "alice_revoked"):
        record = made[gone].record
        for piece in (record.key_id, record.digest, record.label):
            assert piece.encode() not in stored, piece


def test_forget_in_a_home_without_keys_creates_no_key_table(home: Path) -> None:
    with Memory.open(home, embedder="hash") as memory:
        memory.remember(ALICE, "Alice prefers the aisle seat")
        report = memory.forget(ALICE)
    assert "api_keys" not in report.participants
    assert home_keys(home) is None


def test_forget_twice_finds_no_key_the_second_time(home: Path) -> None:
    _keys(home=str(home))
    with Memory.open(home, embedder="hash") as memory:
        assert memory.forget(ALICE).participants["api_keys"] == {"keys": 2}
        assert memory.forget(ALICE).participants["api_keys"] == {"keys": 0}


def test_forget_on_postgres_deletes_the_users_keys(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, "test-secret-0123456789abcdef")
    made = _keys(url=postgres_url)
    with Memory.open(url=postgres_url, embedder="hash") as memory:
        report = memory.forget(ALICE)
    assert report.participants["api_keys"] == {"keys": 2}
    assert not _signs_in(made["alice"].token, url=postgres_url)
    for other in ("bob", "tenant", "beta_alice"):
        assert _signs_in(made[other].token, url=postgres_url), other
