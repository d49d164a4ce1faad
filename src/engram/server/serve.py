"""Run the REST API under uvicorn: one process, or a supervisor and N worker processes.

The listening socket is bound first (so ``port=0`` picks a free port and the URL printed
is the real one), then uvicorn serves :func:`engram.server.app.app_from_env` on it, the
configuration passed to every worker in ``$ENGRAM_SERVE_CONFIG``. Access logs are JSON
lines on standard error (uvicorn's own access log, which would print full paths with
their query strings, is off).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from engram.server.app import CONFIG_ENV, ServeConfig
from engram.server.mcp import PUBLIC_URL_ENV

FACTORY = "engram.server.app:app_from_env"


def log_config(level: str = "INFO") -> dict[str, Any]:
    """uvicorn's errors and engram's JSON access lines, both on standard error."""
    handler = {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(message)s"},
            "error": {"format": "%(levelname)s %(name)s: %(message)s"},
        },
        "handlers": {
            "access": {**handler, "formatter": "plain"},
            "error": {**handler, "formatter": "error"},
        },
        "loggers": {
            "engram.server.access": {"handlers": ["access"], "level": level, "propagate": False},
            "engram.server": {"handlers": ["error"], "level": level, "propagate": False},
            "uvicorn.error": {"handlers": ["error"], "level": level, "propagate": False},
        },
    }


def url_of(sock: socket.socket) -> str:
    """The base URL a bound socket serves."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve(
    config: ServeConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    workers: int = 1,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted; ``announce`` gets the URL once the socket is bound."""
    os.environ[CONFIG_ENV] = config.to_env()
    settings = uvicorn.Config(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,
        log_config=log_config(),
        timeout_graceful_shutdown=10,
    )
    sock = settings.bind_socket()
    os.environ.setdefault(PUBLIC_URL_ENV, url_of(sock))  # the MCP endpoint's resource URL
    announce(url_of(sock))
    server = uvicorn.Server(settings)
    if workers > 1:
        Multiprocess(settings, sockets=[sock]).run()
    else:
        server.run(sockets=[sock])
