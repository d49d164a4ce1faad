"""``engram serve``: the REST API over the embedded home or PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engram.cli._embedding import embedder_option
from engram.cli._existing import existing_home
from engram.cli._jwt import jwt_options
from engram.cli._options import home_option
from engram.config import DEFAULT_HOME
from engram.errors import ConfigError


@click.command("serve")
@home_option("every tier and the API keys, unless --url", default=None)
@click.option("--url", default=None, help="PostgreSQL admin URL: every tier and the keys.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: a free one; the URL printed says which).",
)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--sweep-every",
    "sweep_seconds",
    default=3600.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds between deletions of expired facts by each worker (0: never).",
)
@embedder_option(
    "minilm", "Embedding model (keep the one the memory was written with).", keyword_only=True
)
@jwt_options
def serve_cmd(
    home: Path | None,
    url: str | None,
    host: str,
    port: int,
    workers: int,
    sweep_seconds: float,
    embedder: str,
    jwt: dict[str, object] | None,
) -> None:
    """Serve the REST API; prints the URL, then JSON access logs on standard error.

    Example: engram serve --home .engram --port 8080 --workers 2
    """
    from engram.server.app import ServeConfig
    from engram.server.serve import serve

    if home is not None and url is not None:
        raise ConfigError("give --home or --url, not both")
    if url is None:
        home = existing_home(home or DEFAULT_HOME)
    config = ServeConfig(str(home) if home else None, url, embedder, jwt, sweep_seconds)
    config.jwt_settings()  # a JWT setting the server would refuse stops it before it binds
    serve(config, host=host, port=port, workers=workers, announce=_announce)


def register(group: click.Group) -> None:
    group.add_command(serve_cmd)


def _announce(url: str) -> None:
    click.echo(f"engram serving on {url}")
    sys.stdout.flush()  # a pipe would hold the line until the server stops
