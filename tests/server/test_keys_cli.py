"""``engram keys create | list | revoke`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.errors import AuthenticationError
from engram.server.auth import open_authenticator
from engram.server.keys import SECRET_ENV


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    from engram.cli import main

    monkeypatch.delenv(SECRET_ENV, raising=False)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True) -> tuple[str, str]:
        result = runner.invoke(main, [*args, "--home", str(tmp_path / ".engram")])
        assert (result.exit_code == 0) == ok, result.output
        return result.stdout, result.stderr

    return invoke


def test_create_prints_only_the_token_and_it_authenticates(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out, err = run("keys", "create", "--tenant", "acme", "--user", "alice", "--scope", "read")
    token = out.strip()
    assert "\n" not in token and token.startswith("egk_")
    assert "shown only once" in err and token not in err
    grant = open_authenticator(home=str(tmp_path / ".engram")).authenticate(token)
    assert (grant.tenant_id, grant.user_id, grant.scopes) == ("acme", "alice", {"read"})
    assert grant.expires_at is not None  # 90 days by default


def test_list_shows_ids_never_tokens_and_revoke_refuses_the_key(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    token = run("keys", "create", "--tenant", "acme", "--expires", "never")[0].strip()
    run("keys", "create", "--tenant", "beta")
    out, _ = run("keys", "list", "--tenant", "acme")
    listed = json.loads(out)
    assert [k["key_id"] for k in listed] == [token.split(".")[0]]
    assert token.split(".")[2] not in out and listed[0]["expires_at"] is None
    run("keys", "revoke", listed[0]["key_id"], "--tenant", "beta", ok=False)
    run("keys", "revoke", listed[0]["key_id"], "--tenant", "acme")
    with pytest.raises(AuthenticationError):
        open_authenticator(home=str(tmp_path / ".engram")).authenticate(token)
    assert json.loads(run("keys", "list", "--tenant", "acme")[0])[0]["revoked_at"]


@pytest.mark.parametrize("expires", ["0d", "yesterday", "2020-01-01T00:00:00+00:00", "2030-01-01"])
def test_bad_expiry_is_an_error(run, expires: str) -> None:  # type: ignore[no-untyped-def]
    _, err = run("keys", "create", "--tenant", "acme", "--expires", expires, ok=False)
    assert "InvalidInputError" in err


def test_list_of_a_missing_home_creates_nothing(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("keys", "list", "--tenant", "acme", ok=False)
    assert not (tmp_path / ".engram").exists()


def test_user_filters_list_and_guards_revoke(run) -> None:  # type: ignore[no-untyped-def]
    alice = run("keys", "create", "--tenant", "acme", "--user", "alice")[0].split(".")[0]
    run("keys", "create", "--tenant", "acme", "--user", "bob")
    listed = json.loads(run("keys", "list", "--tenant", "acme", "--user", "alice")[0])
    assert [k["key_id"] for k in listed] == [alice]
    run("keys", "revoke", alice, "--tenant", "acme", "--user", "bob", ok=False)
    run("keys", "revoke", alice, "--tenant", "acme", "--user", "alice")
