"""The inspector as an ASGI app mounted under the REST app, with its own error pages and
security headers on every answer (static files and errors included)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram.errors import AuthenticationError, EngramError
from engram.server._deps import ServerState
from engram.server._problems import classify
from engram.server.auth import FORBIDDEN
from engram.server.inspector import (
    _pages_auth,
    _pages_documents,
    _pages_erasure,
    _pages_memory,
    _pages_threads,
)
from engram.server.inspector._session import SESSION_COOKIE, Sealer
from engram.server.inspector._web import (
    CsrfError,
    Inspector,
    UserNeeded,
    back,
    clear_cookie,
    environment,
    read_cookie,
    render,
)

PREFIX = "/ui"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
PAGES = (_pages_auth, _pages_memory, _pages_threads, _pages_documents, _pages_erasure)


class SecurityHeaders:
    """Adds :data:`HEADERS` to every response of the app it wraps."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in HEADERS}
                kept = [h for h in message.get("headers", []) if h[0].lower() not in names]
                message["headers"] = [*kept, *HEADERS]
            await send(message)

        await self.app(scope, receive, sending)


def inspector_app(served: ServerState, secret: bytes) -> FastAPI:
    """The inspector's pages over the server's memory and authenticator; sessions are
    sealed under a key derived from ``secret``."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.inspector = Inspector(served, Sealer(secret), environment())
    for module in PAGES:
        app.include_router(module.router)
    app.add_api_route("/", home, methods=["GET"])
    static = files("engram.server.inspector").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.add_exception_handler(EngramError, _failed)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(UnicodeError, _invalid)
    return app


def mount_inspector(app: FastAPI, served: ServerState, secret: bytes) -> None:
    """Serve the inspector at ``/ui`` of ``app`` (left out of its OpenAPI document), and
    ``/ui`` itself as a redirect to ``/ui/`` with the same headers."""
    app.mount(PREFIX, SecurityHeaders(inspector_app(served, secret)))
    app.router.routes.append(Route(PREFIX, SecurityHeaders(_to_slash), include_in_schema=False))


async def _to_slash(scope: Scope, receive: Receive, send: Send) -> None:
    """``/ui`` to ``/ui/``, any method, as a path: the framework's own redirect names the
    host the request's ``Host`` header gave, and none of the inspector's headers."""
    base = str(scope.get("root_path", "")).rstrip("/")
    await RedirectResponse(base + PREFIX + "/", status_code=307)(scope, receive, send)


def home(request: Request) -> Response:
    return back(request, "/memories")


def _signin(request: Request) -> Response:
    base = request.scope.get("root_path", "").rstrip("/")
    if request.headers.get("hx-request") == "true":
        answer: Response = Response(status_code=401, headers={"HX-Redirect": base + "/login"})
    else:
        answer = RedirectResponse(base + "/login", status_code=303)
    # a link from another site brings no cookie: the session its browser holds stays
    if read_cookie(request, SESSION_COOKIE) is not None:
        clear_cookie(request, answer, SESSION_COOKIE)
    return answer


async def _failed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, EngramError)
    if isinstance(exc, AuthenticationError):
        return _signin(request)
    if isinstance(exc, UserNeeded):
        return back(request, "/user")
    status, _ = classify(exc)
    if isinstance(exc, CsrfError):
        detail = str(exc)
    elif status == 403:
        detail = FORBIDDEN
    elif status >= 500:
        detail = "the server could not complete the request"
    else:
        detail = " ".join(str(exc).split())
    return _error(request, status, detail)


def _error(request: Request, status: int, detail: str) -> Response:
    return render(request, "error.html", {"status": status, "detail": detail}, status=status)


async def _invalid(request: Request, exc: Exception) -> Response:
    if isinstance(exc, RequestValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return _error(request, 422, f"{where}: {first.get('msg', 'invalid')}")
    return _error(request, 422, "a value is not valid")


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, str(exc.detail))
