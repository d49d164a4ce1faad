"""``engram serve`` serves MCP at ``/mcp`` beside the REST API: a real server process,
reached by the MCP SDK's client with an API key and with a JWT (the same authenticator as
the REST routes), the REST API unchanged beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp_support import (
    ALICE,
    MARKER,
    METADATA,
    bearer,
    call,
    child_env,
    http_server,
    make_key,
    seed,
    text,
)

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
AUDIENCE = "engram-test"


def _public_pem() -> str:
    return KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def _jwt(tenant: str, user: str, scope: str) -> str:
    claims = {"tenant_id": tenant, "sub": user, "scope": scope, "aud": AUDIENCE,
              "exp": int((datetime.now(UTC) + timedelta(minutes=10)).timestamp())}
    return jwt.encode(claims, KEY, algorithm="RS256")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``engram serve --port 0`` with JWTs verified by a PEM key; yields (base URL, home)."""
    root = tmp_path_factory.mktemp("serve-mcp")
    home, pem = root / ".engram", root / "jwt.pem"
    seed(home)
    pem.write_text(_public_pem(), encoding="ascii")
    argv = [sys.executable, "-m", "engram", "serve", "--home", str(home), "--port", "0",
            "--embedder", "hash", "--jwt-key-file", str(pem), "--jwt-audience", AUDIENCE,
            "--jwt-algorithm", "RS256"]
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_PUBLIC_URL"}
    process = subprocess.Popen(argv, env={**env, **child_env()}, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("engram serving on "), line
        base = line.split()[-1]
        _wait(base)
        yield base, home
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait(base: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError("engram serve did not get ready")


async def test_mcp_with_an_api_key_beside_the_rest_api(served: tuple[str, Path]) -> None:
    base, home = served
    token = make_key(home, ALICE, ("read",))
    async with bearer(base + "/mcp", token) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        refused = await call(client, "remember", observation="Likes quiet trains at night")
        assert refused.is_error and "does not allow" in text(refused)
    rest = httpx.get(base + "/healthz", timeout=30)
    assert rest.status_code == 200 and rest.json() == {"status": "ok"}
    missing = httpx.get(base + "/no-such-route", timeout=30)
    assert missing.status_code == 404 and "application/problem+json" in missing.headers.get(
        "content-type", "")


async def test_mcp_with_a_jwt_through_the_same_authenticator(served: tuple[str, Path]) -> None:
    base, _ = served
    async with bearer(base + "/mcp", _jwt("acme", "alice", "read write")) as client:
        assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
    async with bearer(base + "/mcp", _jwt("acme", "bob", "read")) as client:
        assert MARKER not in text(await call(client, "recall", query=f"codename {MARKER}"))
    forged = _jwt("acme", "alice", "read")[:-4] + "AAAA"
    response = httpx.post(base + "/mcp", json={}, timeout=30,
                          headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401


def test_the_metadata_names_the_served_endpoint(served: tuple[str, Path]) -> None:
    base, _ = served
    metadata = httpx.get(base + METADATA, timeout=30).json()
    assert metadata["resource"] == base + "/mcp"
    challenge = httpx.post(base + "/mcp", json={}, timeout=30).headers["www-authenticate"]
    assert f'resource_metadata="{base}{METADATA}"' in challenge


async def test_engram_mcp_http_takes_the_same_jwt_options(served: tuple[str, Path]) -> None:
    _, home = served
    pem = home.parent / "jwt.pem"
    args = ("--jwt-key-file", str(pem), "--jwt-audience", AUDIENCE, "--jwt-algorithm", "RS256")
    with http_server(home, *args) as url:
        async with bearer(url, _jwt("acme", "alice", "read")) as client:
            assert MARKER in text(await call(client, "recall", query=f"codename {MARKER}"))
        async with bearer(url, _jwt("other", "alice", "read")) as client:
            assert MARKER not in text(await call(client, "recall", query=f"codename {MARKER}"))
        wrong = jwt.encode({"tenant_id": "acme", "sub": "alice", "scope": "read",
                            "aud": "elsewhere", "exp": int(time.time()) + 600}, KEY,
                           algorithm="RS256")  # fmt: skip
        response = httpx.post(url, json={}, timeout=30,
                              headers={"Authorization": f"Bearer {wrong}"})  # fmt: skip
        assert response.status_code == 401


def test_jwt_options_are_refused_over_stdio(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "engram", "mcp", "--tenant", "acme", "--user", "alice",
            "--home", str(tmp_path), "--jwt-jwks-url", "file:///nowhere.json",
            "--jwt-audience", AUDIENCE]  # fmt: skip
    done = subprocess.run(argv, env={**os.environ, **child_env()}, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode != 0 and "over --http only" in done.stderr
