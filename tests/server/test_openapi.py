"""The OpenAPI document checked into the docs is the one the app serves."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from engram.server.app import create_app, openapi_document

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
