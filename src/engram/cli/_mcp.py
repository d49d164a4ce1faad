"""``engram mcp``: the MCP server, over stdio (default) or streamable HTTP.

A thin skin over :mod:`engram.server.mcp`; the MCP SDK is imported only when the
command runs.
"""

from __future__ import annotations

from pathlib import Path

import click

from engram._principal import Principal
from engram.cli._embedding import embedder_option, embedder_or_none
from engram.cli._options import home_option, tenant_option, user_option
from engram.errors import InvalidInputError, MissingDependencyError
from engram.memory import Memory

_HINT = "pip install 'engram[mcp]'"


@click.command("mcp")
@tenant_option(required=False)
@user_option(required=False)
@home_option("every tier, unless --url", default=None)
@click.option("--url", default=None, help="All tiers on one PostgreSQL URL (not --home).")
@embedder_option(
    "minilm", "Embedding model (keep the one the memory was written with).", keyword_only=True
)
def mcp_cmd(
    tenant: str | None,
    user: str | None,
    home: Path | None,
    url: str | None,
    embedder: str,
) -> None:
    """Serve engram's memory to an MCP client over stdio, acting for --tenant/--user.

    Tools: remember, recall, forget, list_facts, fact_history, the memory_* commands over
    the documents, thread_list/history/diff/fork; resources: engram://profile and
    engram://documents. The process speaks MCP on stdin/stdout until the client closes it.

    Example: engram mcp --tenant acme --user alice
    """
    try:
        from engram.server.mcp import FixedAccess, run_stdio
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(f"engram mcp needs the MCP SDK: {_HINT}") from exc
    if tenant is None or user is None:
        raise InvalidInputError("engram mcp over stdio acts for --tenant and --user")
    access = FixedAccess(Principal(tenant, user))
    with Memory.open(home, url=url, embedder=embedder_or_none(embedder)) as memory:
        run_stdio(memory, access)


def register(main: click.Group) -> None:
    """Add ``mcp`` to the CLI."""
    main.add_command(mcp_cmd)
