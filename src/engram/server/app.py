"""The REST API: an app factory over one :class:`~engram.memory.Memory` and one
:class:`~engram.server.auth.Authenticator`.

:func:`create_app` builds the FastAPI app from opened parts (tests, embedding in
another app); :func:`app_from_env` is the factory ``engram serve`` gives uvicorn, one
call per worker process, reading :class:`ServeConfig` from ``$ENGRAM_SERVE_CONFIG``.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from engram._principal import Principal, tenant_scope
from engram.config import DEFAULT_HOME
from engram.errors import BackendError, ConfigError
from engram.memory import Memory
from engram.recall import embedder_from_name
from engram.server import _problems
from engram.server._access import AccessMiddleware
from engram.server._deps import ServerState
from engram.server._headers import SingleHeaders
from engram.server._limits import BodyLimit
from engram.server._models import Health
from engram.server._routes_agent import router as agent
from engram.server._routes_documents import router as documents
from engram.server._routes_layer import facts
from engram.server._routes_layer import router as layer
from engram.server._routes_review import router as review
from engram.server._routes_threads import router as threads
from engram.server.auth import Authenticator, JWTSettings, open_authenticator
from engram.server.inspector import mount_inspector
from engram.server.keys import server_secret
from engram.server.mcp import mount_mcp
from engram.stores.audit import ErasureLog
from engram.stores.hot import Threads

CONFIG_ENV = "ENGRAM_SERVE_CONFIG"
PROBE = Principal("engram-readyz", "probe")
"""Who the readiness probe reads as: a tenant no key can be created for... by accident."""
ROUTERS = (layer, facts, review, documents, threads, agent)
SWEEP_SECONDS = 3600.0
"""How often each worker deletes the facts whose expiry has passed (0: never). Expired
facts are never served; the sweep takes their bytes off the store too."""
EVERY_ROUTE = _problems.responses(400, 413, 500)
"""What any request may be answered: a header sent twice, a body too large, a failure."""
AUTHENTICATED = _problems.responses(401, 403, 422, 503)
"""What any ``/v1`` route may answer besides: no credential, no scope, a bad header or
parameter, a tier that does not answer."""
REVIEW = _problems.responses(404, 409, 502, 504)
"""What the review queue's routes may answer besides (approving stores a fact)."""


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """Where the tiers and keys are (a home, or a PostgreSQL admin URL), the embedder,
    optional JWT settings, and how often expired facts are deleted: what each worker
    process opens."""

    home: str | None = None
    url: str | None = None
    embedder: str = "minilm"
    jwt: dict[str, Any] | None = field(default=None)
    sweep_seconds: float = SWEEP_SECONDS

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeConfig:
        raw = os.environ.get(CONFIG_ENV)
        if not raw:
            raise ConfigError(f"${CONFIG_ENV} is not set (start the server with engram serve)")
        return cls(**json.loads(raw))

    def jwt_settings(self) -> JWTSettings | None:
        if self.jwt is None:
            return None
        values = dict(self.jwt)
        values["algorithms"] = tuple(values.get("algorithms") or ("RS256", "ES256"))
        return JWTSettings(**values)


def create_app(
    memory: Memory,
    authenticator: Authenticator,
    *,
    on_close: Callable[[], None] | None = None,
    audit: ErasureLog | None = None,
    session_secret: bytes | None = None,
) -> FastAPI:
    """The REST app over ``memory``, with the inspector at ``/ui``; ``on_close`` runs when
    the server stops. ``audit`` records every whole-user erasure; ``session_secret``
    seals inspector sessions (default: a random one, so sessions end with the process)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if on_close is not None:
            on_close()

    app = FastAPI(
        title="engram",
        summary="Memory for AI agents: facts, documents and threads, per tenant and user.",
        version="1",
        lifespan=lifespan,
        responses=EVERY_ROUTE,
    )
    served = ServerState(memory, authenticator, audit)
    app.state.engram = served
    for router in ROUTERS:
        extra = REVIEW if router is review else {}
        app.include_router(router, responses={**AUTHENTICATED, **extra})
    app.add_api_route("/healthz", healthz, methods=["GET"], tags=["health"])
    app.add_api_route(
        "/readyz",
        readyz,
        methods=["GET"],
        tags=["health"],
        response_model=Health,
        responses=_problems.responses(503),
    )
    _problems.install(app)
    # MCP at /mcp, its metadata at /.well-known/...
    mount_mcp(app, memory, authenticator, audit=audit)
    mount_inspector(app, served, session_secret or secrets.token_bytes(32))
    app.add_middleware(SingleHeaders)  # REST, /mcp and /ui alike
    app.add_middleware(BodyLimit)  # (inside the access log, which logs its 413s and 400s)
    app.add_middleware(AccessMiddleware)
    return app


def healthz() -> Health:
    """The process answers."""
    return Health(status="ok")


def readyz(request: Request) -> Health | JSONResponse:
    """Every tier (and the key store) answers a read."""
    served: ServerState = request.app.state.engram
    try:
        _probe(served)
    except BackendError:
        return _problems.problem(request, 503, "not-ready", "a tier is not reachable")
    return Health(status="ok")


def _probe(served: ServerState) -> None:
    memory = served.memory
    memory.store.records(PROBE, limit=1)
    memory.documents.exists(PROBE, "readyz.md")
    with tenant_scope(PROBE.tenant_id):
        Threads(memory.checkpointer).list_threads(PROBE)
    keyring = getattr(served.authenticator, "keyring", None)
    if keyring is not None:
        keyring.store.get(PROBE.tenant_id, "egk_readyz")


def open_app(config: ServeConfig) -> FastAPI:
    """Open the tiers and keys ``config`` names and build the app over them."""
    embedder = None if config.embedder == "none" else embedder_from_name(config.embedder)
    memory = Memory.open(config.home, url=config.url, embedder=embedder)
    authenticator = open_authenticator(home=config.home, url=config.url, jwt=config.jwt_settings())
    audit = memory.erasure_log  # the log beside the tiers, which forget records in
    sweeper = memory.store.start_sweeper(config.sweep_seconds) if config.sweep_seconds else None

    def close() -> None:
        if sweeper is not None:
            sweeper.stop()
        authenticator.close()
        memory.close()

    secret = _session_secret(config)
    return create_app(memory, authenticator, on_close=close, audit=audit, session_secret=secret)


def _session_secret(config: ServeConfig) -> bytes | None:
    """The key secret (``$ENGRAM_KEY_SECRET`` or the home's file), which every worker
    shares; ``None`` (a random one per process) when there is none."""
    home = None if config.url is not None else Path(config.home or DEFAULT_HOME)
    try:
        return server_secret(home)
    except ConfigError:
        return None


def app_from_env() -> FastAPI:
    """The uvicorn factory: :func:`open_app` with ``$ENGRAM_SERVE_CONFIG``."""
    return open_app(ServeConfig.from_env())


def openapi_document() -> str:
    """The OpenAPI document of the app (what ``docs/openapi.json`` holds)."""
    app = create_app(_Absent(), _Absent())  # type: ignore[arg-type]
    return json.dumps(app.openapi(), indent=1, sort_keys=True) + "\n"


class _Absent:
    """Stands for the memory and authenticator where only the routes matter."""


if __name__ == "__main__":  # python -m engram.server.app > docs/openapi.json
    print(openapi_document(), end="")
