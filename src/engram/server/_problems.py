"""Errors as RFC 9457 problem details: one table from engram's error tree to a status.

Every error is mapped once, here, by the most specific class in :data:`STATUS`. A 401
and a 403 carry one fixed detail each, whatever the cause, so they reveal nothing about
what exists; a 5xx carries none of the error's text.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from engram.errors import (
    AccessDeniedError,
    AuthenticationError,
    BackendError,
    ConfigError,
    ConflictError,
    EmbeddingError,
    EmbeddingTimeoutError,
    EngramError,
    InvalidInputError,
    NotFoundError,
    PathEscapeError,
    PolicyRejectedError,
    SerializationError,
    StaleWriteError,
)
from engram.server._models import Problem
from engram.server.auth import FORBIDDEN
from engram.server.keys import REFUSED

MEDIA_TYPE = "application/problem+json"
STATUS: tuple[tuple[type[EngramError], int, str], ...] = (
    (AuthenticationError, 401, "unauthorized"),
    (PathEscapeError, 422, "invalid-path"),
    (AccessDeniedError, 403, "forbidden"),
    (InvalidInputError, 422, "invalid-input"),
    (NotFoundError, 404, "not-found"),
    (StaleWriteError, 409, "stale-write"),
    (ConflictError, 409, "conflict"),
    (PolicyRejectedError, 422, "policy-rejected"),
    (EmbeddingTimeoutError, 504, "embedding-timeout"),
    (EmbeddingError, 502, "embedding-failed"),
    (BackendError, 503, "backend-unavailable"),
    (SerializationError, 500, "serialization"),
    (ConfigError, 500, "configuration"),
)
"""Most specific first: (error class, HTTP status, problem type slug)."""
TYPE_BASE = "https://engram.dev/problems/"
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
WHEN = {
    400: "A malformed request (its credential or X-Engram-User header sent twice)",
    401: "No valid credential",
    403: "The credential lacks the scope, or names another user",
    404: "Not found (or another user's)",
    409: "A conflict: an id already taken, or a write another writer overtook",
    413: "A request body larger than the server reads",
    422: "Invalid input (or a write the policy refused)",
    500: "The server could not complete the request",
    501: "Not served by this server's tiers",
    502: "The embedding service failed",
    503: "A tier is unreachable",
    504: "The embedding service timed out",
}
"""What each status a route documents means, as its OpenAPI description says."""
PROBLEM_REF = "#/components/schemas/Problem"
_log = logging.getLogger("engram.server")


def classify(exc: EngramError) -> tuple[int, str]:
    """The status and problem slug of ``exc``."""
    for kind, status, slug in STATUS:
        if isinstance(exc, kind):
            return status, slug
    return 500, "internal"


def _detail(exc: EngramError, status: int) -> str:
    if status == 401:
        return REFUSED
    if status == 403:
        return FORBIDDEN
    if status >= 500:
        return "the server could not complete the request"
    return " ".join(str(exc).split())


def problem(request: Request, status: int, slug: str, detail: str) -> JSONResponse:
    """A problem-details response (``WWW-Authenticate: Bearer`` on a 401)."""
    body = {
        "type": TYPE_BASE + slug,
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "instance": request.url.path,
        "request_id": getattr(request.state, "request_id", None),
    }
    headers = {"WWW-Authenticate": 'Bearer realm="engram"'} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


async def _engram(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, EngramError)
    status, slug = classify(exc)
    if status >= 500:
        _log.error(
            "request %s failed: %s",
            getattr(request.state, "request_id", "-"),
            type(exc).__name__,
            exc_info=exc,
        )
    return problem(request, status, slug, _detail(exc, status))


async def _unicode(request: Request, exc: Exception) -> JSONResponse:
    return problem(request, 422, "invalid-input", "a value is not valid text (lone surrogate?)")


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    return problem(request, 422, "invalid-input", f"{where}: {first.get('msg', 'invalid')}")


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    slugs = {404: "not-found", 405: "method-not-allowed", 413: "too-large", 501: "not-implemented"}
    slug = slugs.get(exc.status_code, "http")
    return problem(request, exc.status_code, slug, str(exc.detail))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    _log.error("request %s failed", getattr(request.state, "request_id", "-"), exc_info=exc)
    return problem(request, 500, "internal", "the server could not complete the request")


def install(app: FastAPI) -> None:
    """Map every error to a problem-details answer, and document them so."""
    app.add_exception_handler(EngramError, _engram)
    app.add_exception_handler(UnicodeError, _unicode)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            as_problems(build())
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI entries of the problem answers a route gives (``responses=`` of a route
    or router): :func:`as_problems` gives them their content."""
    return {status: {"description": WHEN[status]} for status in statuses}


def as_problems(document: dict[str, Any]) -> None:
    """Make every 4xx and 5xx answer of an OpenAPI ``document`` what the handlers send:
    ``application/problem+json`` with the :class:`Problem` schema."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for code, answer in operation.get("responses", {}).items():
                if code[:1] in ("4", "5"):
                    answer["content"] = {MEDIA_TYPE: {"schema": {"$ref": PROBLEM_REF}}}
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema()
    if "/HTTPValidationError" not in json.dumps(document.get("paths", {})):
        schemas.pop("HTTPValidationError", None)  # FastAPI's own 422 body, never sent
        schemas.pop("ValidationError", None)
