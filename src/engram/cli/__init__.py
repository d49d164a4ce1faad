"""The ``engram`` command line: a thin skin over the Python API.

Each command group lives in its own private module exposing ``register(group)``;
the modules are listed in :data:`COMMAND_MODULES`. A module whose commands
:data:`LAZY_COMMANDS` names is imported only when one of them runs (``engram --help``
shows their help from that table); any other is imported when the CLI starts.
"""

from __future__ import annotations

import importlib

import click

from engram.cli._streams import failed, require_stdout
from engram.errors import EngramError

COMMAND_MODULES: tuple[str, ...] = (
    "engram.cli._eval",
    "engram.cli._agent",
    "engram.cli._demo",
    "engram.cli._threads",
    "engram.cli._memory",
    "engram.cli._layer",
    "engram.cli._docs",
    "engram.cli._review",
    "engram.cli._mcp",
    "engram.cli._keys",
    "engram.cli._serve",
    "engram.cli._import",
)
"""Modules that add commands to :func:`main`, each through ``register(main)``."""

LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "agent": ("engram.cli._agent", "Run, resume, approve and inspect Market Analyst threads."),
    "demo": (
        "engram.cli._demo",
        "Run the Market Analyst story on the embedded default, narrating each tier.",
    ),
    "docs": ("engram.cli._docs", "Markdown documents a project keeps (the document tier)."),
    "eval": (
        "engram.cli._eval",
        "Measure retrieval quality (LoCoMo, LongMemEval) and memory lifecycle correctness.",
    ),
    "import": (
        "engram.cli._import",
        "Remember facts from a JSON Lines file or an export, checked before any is written.",
    ),
    "export": ("engram.cli._layer", "Print everything engram holds about the user as JSON."),
    "erasures": (
        "engram.cli._layer",
        "List the tenant's recorded erasures, newest first, as JSON lines (who, when, counts; "
        "never content); with ``--user``, that user's only.",
    ),
    "forget": (
        "engram.cli._layer",
        "Erase the user from every tier (facts, history, documents, threads), the "
        "publication outbox and the user's API keys; print the report and, for a whole user, "
        "keep its audit record (see ``engram erasures``).",
    ),
    "keys": ("engram.cli._keys", "Create, list and revoke the API keys ``engram serve`` accepts."),
    "mcp": (
        "engram.cli._mcp",
        "Serve engram's memory to MCP clients, over stdio or streamable HTTP.",
    ),
    "memory": ("engram.cli._memory", "Long-term facts about a user (the cold tier)."),
    "recall": (
        "engram.cli._layer",
        "Print the context block for QUERY: profile, memories, documents, within a budget.",
    ),
    "remember": (
        "engram.cli._layer",
        "Remember OBSERVATION about the user (write policy, redaction, consolidation).",
    ),
    "review": (
        "engram.cli._review",
        "Writes held for review (never recalled): list them, approve or discard one by id.",
    ),
    "serve": (
        "engram.cli._serve",
        "Serve the REST API; prints the URL, then JSON access logs on standard error.",
    ),
    "threads": (
        "engram.cli._threads",
        "Inspect and manage durable agent threads (the hot tier).",
    ),
}
"""Command name -> (the module of :data:`COMMAND_MODULES` that registers it, its short help)."""


class _Group(click.Group):
    """Turns engram's own errors, and a standard output that cannot be written, into a
    one-line message and exit code 1 (a driver's multi-line message is folded onto that
    line); imports a command's module when the
    command is first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            importlib.import_module(LAZY_COMMANDS[cmd_name][0]).register(self)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, with the help of commands not yet imported from the table."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        rows = [(n, _short_help(self.commands.get(n), n, limit)) for n in names]
        shown = [(name, text) for name, text in rows if text is not None]
        if shown:
            with formatter.section("Commands"):
                formatter.write_dl(shown)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except EngramError as exc:
            message = " ".join(str(exc).split())
            raise click.ClickException(f"{type(exc).__name__}: {message}") from exc
        except UnicodeError as exc:  # an argument that is not valid text (bad UTF-8 bytes)
            raise click.ClickException("InvalidInputError: an argument is not valid text") from exc
        except OSError as exc:  # standard output full or closed, or the file system's
            raise failed(exc) from exc


@click.group(cls=_Group)
@click.version_option(package_name="engram")
def main() -> None:
    """engram: memory for AI agents (hot threads, long-term facts, documents, working memory)."""
    require_stdout()


def _short_help(command: click.Command | None, name: str, limit: int) -> str | None:
    if command is None:
        return click.Command(name, help=LAZY_COMMANDS[name][1]).get_short_help_str(limit)
    return None if command.hidden else command.get_short_help_str(limit)


def _load_commands() -> None:
    lazy = {module for module, _ in LAZY_COMMANDS.values()}
    for name in COMMAND_MODULES:
        if name not in lazy:
            importlib.import_module(name).register(main)


_load_commands()
