"""Authentication and its answers through a real ``engram serve`` process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from serve_support import Server, start

from engram import Memory, Principal
from engram.recall import HashEmbedder
from engram.server.auth import open_keyring
from engram.server.keys import Keyring, server_secret
from engram.stores.keys import open_keys

ALICE = Principal("acme", "alice")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("rest-auth")
    home = root / ".engram"
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.remember(ALICE, "Alice drinks rooibos", slot="drink")
    server = start(["--home", str(home), "--embedder", "hash"], cwd=root)
    yield server, home
    server.stop()


def _comparable(response: httpx.Response) -> tuple[int, str, dict[str, object]]:
    body = response.json()
    return (
        response.status_code,
        response.headers["content-type"],
        {k: v for k, v in body.items() if k not in ("request_id", "instance")},
    )


def test_every_unauthenticated_answer_is_the_same_401(served: tuple[Server, Path]) -> None:
    server, home = served
    keyring = open_keyring(home=home)
    revoked = keyring.create("acme", user_id="alice")
    keyring.revoke("acme", revoked.record.key_id)
    with open_keys(home) as store:
        past = datetime.now(UTC) - timedelta(days=2)
        expired = Keyring(store, server_secret(home), clock=lambda: past).create(
            "acme", user_id="alice", expires_at=past + timedelta(days=1)
        )
    good = keyring.create("acme", user_id="alice").token
    headers: list[dict[str, str]] = [
        {},
        {"Authorization": f"Bearer {revoked.token}"},
        {"Authorization": f"Bearer {expired.token}"},
        {"Authorization": f"Bearer {good[:-2]}"},
        {"Authorization": f"Basic {good}"},
        {"Authorization": "Bearer egk_000000000000.YWNtZQ.x"},
        {"Authorization": "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."},
        {"Authorization": "Bearer"},
    ]
    answers = set()
    for header in headers:
        response = httpx.get(server.url + "/v1/facts", headers=header)
        assert response.headers["www-authenticate"].startswith("Bearer")
        answers.add(json.dumps(_comparable(response), sort_keys=True))
    assert len(answers) == 1 and '"status": 401' in answers.pop()
    with server.client(good) as client:
        assert "rooibos" in client.get("/v1/facts").text


def test_a_key_revoked_by_the_cli_is_refused_by_the_running_server(
    served: tuple[Server, Path],
) -> None:
    server, home = served
    token = open_keyring(home=home).create("acme", user_id="alice").token
    with server.client(token) as client:
        assert client.get("/v1/facts").status_code == 200
        subprocess.run(
            [
                sys.executable,
                "-m",
                "engram",
                "keys",
                "revoke",
                token.split(".")[0],
                "--tenant",
                "acme",
                "--home",
                str(home),
            ],
            check=True,
        )
        assert client.get("/v1/facts").status_code == 401


def test_a_user_bound_key_cannot_act_for_another_user(served: tuple[Server, Path]) -> None:
    server, home = served
    keyring = open_keyring(home=home)
    alice = keyring.create("acme", user_id="alice", scopes=["read", "write"]).token
    reader = keyring.create("acme", user_id="alice", scopes=["read"]).token
    with server.client(alice, **{"X-Engram-User": "bob"}) as client:
        as_bob = client.get("/v1/facts")
        as_bob_write = client.post("/v1/memories", json={"observation": "Bob likes jazz"})
    with server.client(reader) as client:
        no_scope = client.post("/v1/memories", json={"observation": "Alice likes jazz"})
    assert as_bob.status_code == as_bob_write.status_code == no_scope.status_code == 403
    assert _comparable(as_bob) == _comparable(no_scope) == _comparable(as_bob_write)
    with server.client(alice, **{"X-Engram-User": "alice"}) as client:
        assert client.get("/v1/facts").status_code == 200
    tenant_key = keyring.create("acme", scopes=["read"]).token
    with server.client(tenant_key) as client:
        assert client.get("/v1/facts").status_code == 403  # must name a user
    with server.client(tenant_key, **{"X-Engram-User": "alice"}) as client:
        assert "rooibos" in client.get("/v1/facts").text
    with server.client(tenant_key, **{"X-Engram-User": "../beta"}) as client:
        assert client.get("/v1/facts").status_code == 422


def test_request_ids_errors_and_access_logs(served: tuple[Server, Path]) -> None:
    server, home = served
    token = open_keyring(home=home).create("acme", user_id="alice").token
    with server.client(token) as client:
        echoed = client.get("/v1/facts/nope", headers={"X-Request-ID": "trace-42"})
        invalid = client.get("/v1/facts", headers={"X-Request-ID": "bad id\twith tab"})
        bad_body = client.post("/v1/recall", json={"query": "x", "budget_tokens": -1})
        unknown = client.get("/v1/nowhere")
    assert (
        echoed.headers["x-request-id"] == "trace-42" and echoed.json()["request_id"] == "trace-42"
    )
    assert echoed.status_code == 404 and echoed.json()["type"].endswith("/not-found")
    assert len(invalid.headers["x-request-id"]) == 32
    assert bad_body.status_code == 422 and "budget_tokens" in bad_body.json()["detail"]
    assert unknown.status_code == 404
    for response in (echoed, bad_body, unknown):
        assert response.headers["content-type"] == "application/problem+json"
    time.sleep(0.5)
    lines = [json.loads(line) for line in server.errors if line.startswith("{")]
    mine = [line for line in lines if line["request_id"] == "trace-42"]
    assert mine == [
        {
            **mine[0],
            "method": "GET",
            "route": "/v1/facts/{key}",
            "status": 404,
            "key_id": token.split(".")[0],
        }
    ]
    assert set(mine[0]) == {
        "ts",
        "method",
        "route",
        "status",
        "duration_ms",
        "request_id",
        "key_id",
    }
    assert "rooibos" not in "".join(server.errors) and "nope" not in "".join(server.errors)


def test_health_and_readiness(served: tuple[Server, Path]) -> None:
    server, _ = served
    assert httpx.get(server.url + "/healthz").json() == {"status": "ok"}
    assert httpx.get(server.url + "/readyz").json() == {"status": "ok"}


def test_serve_refuses_a_home_that_holds_nothing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "engram", "serve", "--home", str(tmp_path / "none"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "NotFoundError" in result.stderr
    assert not (tmp_path / "none").exists()


def test_a_body_larger_than_the_server_reads_is_refused_before_it_is_read(
    served: tuple[Server, Path],
) -> None:
    """17 MiB, declared or streamed without a length, with no credential or a good one:
    a 413 problem, and the server answers the next request as before."""
    from engram.server._limits import MAX_BODY_BYTES

    server, home = served
    good = open_keyring(home=home).create("acme", user_id="alice").token
    big = b'{"observation": "' + b"x" * (MAX_BODY_BYTES + 1024 * 1024) + b'"}'

    def streamed() -> Iterator[bytes]:
        for offset in range(0, len(big), 1024 * 1024):
            yield big[offset : offset + 1024 * 1024]

    for headers in ({}, {"Authorization": f"Bearer {good}"}):
        for content in (big, streamed()):
            answer = httpx.post(
                server.url + "/v1/memories",
                content=content,
                headers={**headers, "Content-Type": "application/json"},
                timeout=60.0,
            )
            assert answer.status_code == 413, answer.text[:200]
            assert answer.json()["type"].endswith("too-large")
    with server.client(good) as client:
        assert "rooibos" in client.get("/v1/facts").text


def test_a_credential_or_user_header_sent_twice_is_refused(served: tuple[Server, Path]) -> None:
    """Two ``Authorization`` (or ``X-Engram-User``) headers: which one a proxy, a log or
    the server reads is anyone's guess, so no one is served (the first used to win)."""
    server, home = served
    keyring = open_keyring(home=home)
    alice = keyring.create("acme", user_id="alice").token
    carol = keyring.create("beta", user_id="carol", scopes=["read", "write"]).token
    tenant = keyring.create("acme", scopes=["read"]).token
    with server.client(carol) as client:
        marker = client.post("/v1/memories", json={"observation": "Carol hides wombat-9013"})
        assert marker.status_code == 201
    twice: list[list[tuple[str, str]]] = [
        [("Authorization", f"Bearer {carol}"), ("Authorization", f"Bearer {alice}")],
        [("Authorization", f"Bearer {alice}"), ("Authorization", f"Bearer {carol}")],
        [("Authorization", f"Bearer {alice}"), ("authorization", f"Bearer {alice}")],
        [("Authorization", f"Bearer {tenant}"), ("X-Engram-User", "bob"),
         ("X-Engram-User", "alice")],
        [("Authorization", f"Bearer {tenant}"), ("X-Engram-User", "alice"),
         ("x-engram-user", "alice")],
        [("Authorization", f"Bearer {alice}"), ("Authorization", "")],
    ]  # fmt: skip
    for headers in twice:
        for path in ("/v1/facts", "/mcp", "/v1/nowhere"):
            answer = httpx.get(server.url + path, headers=headers)
            assert answer.status_code == 400, (path, headers, answer.text)
            assert answer.headers["content-type"] == "application/problem+json"
            problem = answer.json()
            assert problem["title"] == "Bad Request" and problem["status"] == 400
            assert problem["type"].endswith("/duplicate-header")
            assert "wombat" not in answer.text and "rooibos" not in answer.text
    with server.client(alice) as client:  # one of each is served as before
        assert "rooibos" in client.get("/v1/facts", headers={"X-Engram-User": "alice"}).text
