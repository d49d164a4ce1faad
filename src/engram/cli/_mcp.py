"""``engram mcp``: the MCP server, over stdio (default) or streamable HTTP.

A thin skin over :mod:`engram.server.mcp`; the MCP SDK is imported only when the
command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from engram._principal import Principal
from engram.cli._embedding import embedder_option, embedder_or_none
from engram.cli._jwt import jwt_options
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._streams import require_stdin
from engram.config import DEFAULT_HOME
from engram.errors import InvalidInputError, MissingDependencyError
from engram.memory import Memory

_HINT = "pip install 'engram[mcp,server]'"
KEY_ENV = "ENGRAM_API_KEY"


def _server_module() -> Any:
    try:
        from engram.server import mcp
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(f"engram mcp needs the MCP SDK: {_HINT}") from exc
    return mcp


def _stdio_access(
    tenant: str | None, user: str | None, key: str | None, home: Path | None, url: str | None
) -> Any:
    """Who a stdio server acts for: --tenant/--user, or the grant of --key."""
    mcp = _server_module()
    if key is not None:
        if tenant is not None:
            raise InvalidInputError("--key names its tenant: leave out --tenant")
        from engram.server.auth import open_authenticator

        where = None if url else str(home or DEFAULT_HOME)
        authenticator = open_authenticator(home=where, url=url)
        authenticator.authenticate(key)  # a key that is not valid stops the server at once
        return mcp.KeyAccess(authenticator, key, user)
    if tenant is None or user is None:
        raise InvalidInputError("engram mcp over stdio acts for --tenant and --user, or --key")
    from engram.stores.audit import local_actor

    return mcp.FixedAccess(Principal(tenant, user), started_by=local_actor("mcp"))


def _serve_http(
    memory: Memory, audit: Any, options: dict[str, Any], home: Path | None, url: str | None
) -> None:
    mcp = _server_module()
    from engram.server.auth import open_authenticator

    host, port = options["host"], options["port"]
    resource = options["resource_url"] or f"http://{host}:{port}{mcp.MCP_PATH}"
    from engram.server.app import ServeConfig

    jwt = ServeConfig(jwt=options["jwt"]).jwt_settings()
    where = None if url else str(home or DEFAULT_HOME)
    authenticator = open_authenticator(home=where, url=url, jwt=jwt)
    app = mcp.mcp_http_app(
        memory,
        authenticator,
        resource_url=resource,
        issuer_url=options["issuer_url"],
        user=options["user"],
        host=host,
        audit=audit,
    )
    click.echo(f"engram MCP server at {resource}", err=True)
    mcp.serve_http(app, host, port)


@click.command("mcp")
@tenant_option(required=False)
@user_option(required=False)
@click.option(
    "--key",
    default=None,
    envvar=KEY_ENV,
    show_envvar=True,
    help="stdio: act with this API key's grant (verified on every call).",
)
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP: port.")
@click.option("--resource-url", default=None, help="HTTP: public URL of the endpoint.")
@click.option("--issuer-url", default=None, help="HTTP: the authorization server of its JWTs.")
@home_option("every tier and the API keys, unless --url", default=None)
@click.option("--url", default=None, help="All tiers on one PostgreSQL URL (not --home).")
@embedder_option(
    "minilm", "Embedding model (keep the one the memory was written with).", keyword_only=True
)
@jwt_options
def mcp_cmd(
    tenant: str | None,
    user: str | None,
    key: str | None,
    http: bool,
    home: Path | None,
    url: str | None,
    embedder: str,
    **options: Any,
) -> None:
    """Serve engram's memory to MCP clients, over stdio or streamable HTTP.

    Over stdio it acts for --tenant/--user (or the user of --key); with --http every
    request carries a bearer API key or a JWT the --jwt-* options accept (a tenant-level
    one only with --user: the user it acts for).

    Tools: remember, recall, forget, list_facts, fact_history, the memory_* commands over
    the documents, thread_list/history/diff/fork; resources: engram://profile and
    engram://documents.

    Example: engram mcp --tenant acme --user alice
    """
    if http and (tenant is not None or key is not None):
        raise InvalidInputError("over --http the tenant comes from each request's credential")
    if not http and options["jwt"] is not None:
        raise InvalidInputError("--jwt-* options verify bearer tokens over --http only")
    if not http:
        require_stdin("MCP over stdio reads its requests there")
    access = None if http else _stdio_access(tenant, user, key, home, url)
    with Memory.open(home, url=url, embedder=embedder_or_none(embedder)) as memory:
        audit = memory.erasure_log  # the log beside the tiers, which forget records in
        if access is None:
            _serve_http(memory, audit, {**options, "user": user}, home, url)
        else:
            _server_module().run_stdio(memory, access, audit)


def register(main: click.Group) -> None:
    """Add ``mcp`` to the CLI."""
    main.add_command(mcp_cmd)
