"""``engram serve``: the REST API over the embedded home or PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engram.cli._embedding import embedder_option
from engram.cli._existing import existing_home
from engram.cli._options import home_option
from engram.config import DEFAULT_HOME
from engram.errors import ConfigError


def _jwt(
    jwks_url: str | None,
    key_file: Path | None,
    audience: str | None,
    issuer: str | None,
    algorithms: tuple[str, ...],
    claims: tuple[str, str | None, str],
) -> dict[str, object] | None:
    if jwks_url is None and key_file is None:
        return None
    if audience is None:
        raise ConfigError("JWT verification needs --jwt-audience")
    tenant, user, scope = claims
    return {
        "audience": audience,
        "jwks_url": jwks_url,
        "issuer": issuer,
        "key": key_file.read_text(encoding="utf-8") if key_file else None,
        "algorithms": list(algorithms) or None,
        "tenant_claim": tenant,
        "user_claim": user,
        "scope_claim": scope,
    }


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
@embedder_option(
    "minilm", "Embedding model (keep the one the memory was written with).", keyword_only=True
)
@click.option("--jwt-jwks-url", default=None, help="Accept JWTs signed by this JWKS.")
@click.option(
    "--jwt-key-file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Accept JWTs verified by this PEM key (or HS256 secret).",
)
@click.option("--jwt-audience", default=None, help="The audience JWTs must name.")
@click.option("--jwt-issuer", default=None, help="The issuer JWTs must name.")
@click.option("--jwt-algorithm", "jwt_algorithms", multiple=True, help="Allowed algorithm.")
@click.option("--jwt-tenant-claim", default="tenant_id", show_default=True)
@click.option(
    "--jwt-user-claim",
    default="sub",
    show_default=True,
    help="Claim naming the user; '' for tenant-level tokens.",
)
@click.option("--jwt-scope-claim", default="scope", show_default=True)
def serve_cmd(
    home: Path | None,
    url: str | None,
    host: str,
    port: int,
    workers: int,
    embedder: str,
    jwt_jwks_url: str | None,
    jwt_key_file: Path | None,
    jwt_audience: str | None,
    jwt_issuer: str | None,
    jwt_algorithms: tuple[str, ...],
    jwt_tenant_claim: str,
    jwt_user_claim: str,
    jwt_scope_claim: str,
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
    claims = (jwt_tenant_claim, jwt_user_claim or None, jwt_scope_claim)
    jwt = _jwt(jwt_jwks_url, jwt_key_file, jwt_audience, jwt_issuer, jwt_algorithms, claims)
    config = ServeConfig(str(home) if home else None, url, embedder, jwt)
    serve(config, host=host, port=port, workers=workers, announce=_announce)


def register(group: click.Group) -> None:
    group.add_command(serve_cmd)


def _announce(url: str) -> None:
    click.echo(f"engram serving on {url}")
    sys.stdout.flush()  # a pipe would hold the line until the server stops
