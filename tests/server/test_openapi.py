"""The OpenAPI document checked into the docs is the one the app serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from engram import Memory, Principal
from engram.recall import HashEmbedder
from engram.server._problems import TITLES, WHEN
from engram.server.app import create_app, openapi_document
from engram.server.auth import open_authenticator, open_keyring

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_docs_openapi_json_is_current() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == openapi_document(), (
        "docs/openapi.json is stale: python -m engram.server.app > docs/openapi.json"
    )


def test_the_app_serves_that_document_and_every_route_is_authenticated() -> None:
    app = create_app(object(), object())  # type: ignore[arg-type]
    served = TestClient(app).get("/openapi.json").json()
    assert served == json.loads(DOCUMENT.read_text(encoding="utf-8"))
    for path, operations in served["paths"].items():
        for method, operation in operations.items():
            secured = bool(operation.get("security"))
            assert secured == path.startswith("/v1/"), (method, path)
            if secured:
                assert {"401", "403"} <= set(operation["responses"]), (method, path)


def test_list_routes_take_limit_and_cursor() -> None:
    paths = json.loads(DOCUMENT.read_text(encoding="utf-8"))["paths"]
    lists = ["/v1/facts", "/v1/documents", "/v1/threads", "/v1/threads/{thread_id}/history"]
    for path in lists:
        names = {p["name"] for p in paths[path]["get"]["parameters"]}
        assert {"limit", "cursor"} <= names, path


PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    paths = json.loads(DOCUMENT.read_text(encoding="utf-8"))["paths"]
    return [(m, p, op) for p, ops in paths.items() for m, op in ops.items()]


def test_every_error_answer_is_documented_as_the_problem_the_server_sends() -> None:
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    assert set(document["components"]["schemas"]["Problem"]["required"]) >= {
        "type", "title", "status", "detail"
    }  # fmt: skip
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in _operations():
        codes = {int(code) for code in operation["responses"]}
        assert {400, 413, 500} <= codes, (method, path)
        if path.startswith("/v1/"):
            assert {401, 403, 422, 503} <= codes, (method, path)
        for code, response in operation["responses"].items():
            if int(code) >= 400:
                assert response["content"] == PROBLEM, (method, path, code)
                assert response["description"] == WHEN[int(code)], (method, path, code)


def test_the_statuses_a_route_answers_are_documented(tmp_path: Path) -> None:
    """Requests that end in each error a route can give: every status is in the route's
    document, and its answer carries that status's title."""
    home = tmp_path / ".engram"
    alice = Principal("acme", "alice")
    documented = {(m, p): op for m, p, op in _operations()}
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.documents.write(alice, "notes.md", "# Notes\n\nline\n")
        token = open_keyring(home=home).create("acme", user_id="alice", scopes=["admin"]).token
        app = create_app(memory, open_authenticator(home=str(home)))
        client = TestClient(app, headers={"Authorization": f"Bearer {token}"})
        twice = {"headers": [("Authorization", f"Bearer {token}")] * 2}
        started = client.post("/v1/agent/runs", json={"request": "Analyse NVDA", "thread_id": "t1"})
        assert started.status_code == 201, started.text[:300]
        big = {"content": b"{" + b" " * (17 * 1024 * 1024) + b"}"}
        requests: list[tuple[str, str, str, dict[str, Any], int]] = [
            ("GET", "/v1/facts", "/v1/facts", twice, 400),
            ("GET", "/healthz", "/healthz", twice, 400),
            ("GET", "/v1/facts/nope", "/v1/facts/{key}", {}, 404),
            ("DELETE", "/v1/facts/nope", "/v1/facts/{key}", {}, 404),
            ("POST", "/v1/documents/create", "/v1/documents/create",
             {"json": {"path": "/memories/notes.md", "file_text": "x"}}, 409),
            ("POST", "/v1/documents/rename", "/v1/documents/rename",
             {"json": {"old_path": "/memories/nope.md", "new_path": "/memories/b.md"}}, 404),
            ("POST", "/v1/documents/view", "/v1/documents/view",
             {"json": {"path": "/memories/nope.md"}}, 404),
            ("POST", "/v1/threads/t-nope/fork", "/v1/threads/{thread_id}/fork",
             {"json": {"checkpoint_id": "c"}}, 404),
            ("POST", "/v1/agent/runs", "/v1/agent/runs",
             {"json": {"request": "Analyse AMD", "thread_id": "t1"}}, 409),
            ("POST", "/v1/recall", "/v1/recall", {"json": {"query": "x", "budget_tokens": 0}}, 422),
            ("POST", "/v1/memories", "/v1/memories", big, 413),
        ]  # fmt: skip
        for method, url, path, options, status in requests:
            answer = client.request(method, url, **options)
            assert answer.status_code == status, (method, url, answer.text[:200])
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.json()["title"] == TITLES[status]
            assert str(status) in documented[(method.lower(), path)]["responses"], (path, status)
