"""``engram serve`` on PostgreSQL, and with JWTs from a JWKS file or a shared-secret file,
as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from serve_support import start

from engram import Memory
from engram.server.auth import open_keyring
from engram.server.keys import SECRET_ENV

SECRET = "rest-test-secret-0123456789abcdef"


def test_serve_on_postgres_keeps_tenants_apart(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    keyring = open_keyring(url=postgres_url)
    with keyring.store:
        alice = keyring.create("acme", user_id="alice").token
        intruder = keyring.create("beta", user_id="alice").token
    server = start(["--url", postgres_url, "--embedder", "hash", "--workers", "2"], cwd=tmp_path)
    try:
        with server.client(alice) as client:
            added = client.post("/v1/memories", json={"observation": "Alice sails a dinghy"})
            assert added.status_code == 201, added.text
            assert "dinghy" in client.post("/v1/recall", json={"query": "sailing dinghy"}).text
            assert client.get("/v1/agent/runs/t-none").status_code == 404
        with server.client(intruder) as client:
            assert "dinghy" not in client.post("/v1/recall", json={"query": "dinghy"}).text
            assert client.get("/v1/facts").json()["items"] == []
            assert client.get(f"/v1/facts/{added.json()['key']}").status_code == 404
    finally:
        server.stop()


def test_the_agent_publishes_once_on_postgres_and_forget_erases_it(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    keyring = open_keyring(url=postgres_url)
    with keyring.store:
        scopes = ("read", "write", "erase")
        alice = keyring.create("pg-agent", user_id="alice", scopes=scopes).token
        intruder = keyring.create("pg-other", user_id="alice").token
    server = start(["--url", postgres_url, "--embedder", "hash"], cwd=tmp_path)
    try:
        with server.client(alice) as client:
            body = {"request": "Compare NVDA and AMD", "thread_id": "t-pg"}
            started = client.post("/v1/agent/runs", json=body)
            assert started.status_code == 201, started.text
            digest = started.json()["draft_hash"]
            with server.client(intruder) as other:
                assert other.get("/v1/agent/runs/t-pg").status_code == 404
                stolen = other.post("/v1/agent/runs/t-pg/approve", json={"draft_hash": digest})
                assert stolen.status_code == 404
            done = client.post("/v1/agent/runs/t-pg/approve", json={"draft_hash": digest})
            assert done.status_code == 200 and done.json()["publication"], done.text
            again = client.post("/v1/agent/runs/t-pg/approve", json={"draft_hash": digest})
            assert again.status_code in (200, 409)
            forgot = client.post("/v1/forget", json={})
            report = forgot.json()
            assert forgot.status_code == 200, forgot.text
            assert report["participants"]["outbox"] == {"publications": 1}, report
    finally:
        server.stop()


def test_serve_accepts_jwts_from_a_jwks_file(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**json.loads(RSAAlgorithm.to_jwk(key.public_key())), "kid": "k1", "alg": "RS256"}
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [jwk]}))
    home = tmp_path / ".engram"
    Memory.open(home).close()
    audience = "https://engram.test"
    args = ["--home", str(home), "--embedder", "hash", "--jwt-jwks-url", jwks.as_uri(),
            "--jwt-audience", audience, "--jwt-tenant-claim", "org"]  # fmt: skip
    server = start(args, cwd=tmp_path)

    def token(**claims: object) -> str:
        body = {"aud": audience, "exp": int(time.time()) + 300, "sub": "alice", "org": "acme",
                "scope": "read write", **claims}  # fmt: skip
        return jwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})

    try:
        with server.client(token()) as client:
            assert (
                client.post("/v1/memories", json={"observation": "Alice rows at dawn"}).status_code
                == 201
            )
            assert "dawn" in client.get("/v1/facts").text
        with server.client(token(scope="read")) as client:
            assert client.post("/v1/memories", json={"observation": "x y z"}).status_code == 403
        with server.client(token(org="beta")) as client:
            assert client.get("/v1/facts").json()["items"] == []
        with server.client(token(aud="https://elsewhere")) as client:
            assert client.get("/v1/facts").status_code == 401
    finally:
        server.stop()
    assert not any("dawn" in line for line in server.errors)


SHARED = "a-shared-secret-of-at-least-32-bytes-0123"


def test_serve_reads_a_shared_secret_file_as_echo_wrote_it(tmp_path: Path) -> None:
    """``echo secret > file`` ends the file with a newline, which is no part of the secret;
    tokens from clocks a few seconds ahead pass; an ``exp`` that is a string does not."""
    secret = tmp_path / "hs.secret"
    secret.write_text(f"  {SHARED}\n\n")
    home = tmp_path / ".engram"
    Memory.open(home).close()
    args = ["--home", str(home), "--embedder", "hash", "--jwt-key-file", str(secret),
            "--jwt-algorithm", "HS256", "--jwt-audience", "engram-test"]  # fmt: skip
    server = start(args, cwd=tmp_path)

    def token(**claims: object) -> str:
        body = {"aud": "engram-test", "exp": int(time.time()) + 300, "sub": "alice",
                "tenant_id": "acme", "scope": "read", **claims}  # fmt: skip
        return jwt.encode(body, SHARED, algorithm="HS256")

    try:
        ahead = int(time.time()) + 2
        for good in (token(), token(iat=ahead, nbf=ahead)):
            with server.client(good) as client:
                assert client.get("/v1/facts").status_code == 200
        for bad in (token(exp="9999999999"), token(iat="0")):
            with server.client(bad) as client:
                assert client.get("/v1/facts").status_code == 401
    finally:
        server.stop()


def _refused(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / ".engram"
    Memory.open(home).close()
    argv = [sys.executable, "-m", "engram", *args, "--home", str(home), "--port", "0"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "engram serving on" not in done.stdout, done
    return done


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]], ids=" ".join)
def test_a_short_secret_file_or_a_wild_leeway_stops_the_command(
    tmp_path: Path, command: list[str]
) -> None:
    short = tmp_path / "short.secret"
    short.write_text("abc\n")
    jwt_args = ["--jwt-algorithm", "HS256", "--jwt-audience", "a"]
    done = _refused(tmp_path, *command, "--jwt-key-file", str(short), *jwt_args)
    assert "shared secret" in done.stderr and "32 bytes" in done.stderr
    blank = tmp_path / "blank.secret"
    blank.write_text("\n")
    done = _refused(tmp_path, *command, "--jwt-key-file", str(blank), *jwt_args)
    assert "shared secret" in done.stderr
    good = tmp_path / "good.secret"
    good.write_text(SHARED)
    done = _refused(tmp_path, *command, "--jwt-key-file", str(good), *jwt_args,
                    "--jwt-leeway", "301")  # fmt: skip
    assert done.returncode == 2 and "--jwt-leeway" in done.stderr
