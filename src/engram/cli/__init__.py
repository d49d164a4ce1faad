"""The ``engram`` command line: a thin skin over the Python API.

Each command group lives in its own private module exposing ``register(group)``;
the modules are listed in :data:`COMMAND_MODULES` and loaded when the CLI starts
(never at ``import engram``).
"""

from __future__ import annotations

import importlib

import click

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


class _Group(click.Group):
    """Turns engram's own errors into a one-line message and exit code 1 (a driver's
    multi-line message is folded onto that line)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except EngramError as exc:
            message = " ".join(str(exc).split())
            raise click.ClickException(f"{type(exc).__name__}: {message}") from exc
        except UnicodeError as exc:  # an argument that is not valid text (bad UTF-8 bytes)
            raise click.ClickException("InvalidInputError: an argument is not valid text") from exc


@click.group(cls=_Group)
@click.version_option(package_name="engram")
def main() -> None:
    """engram: memory for AI agents (hot threads, long-term facts, documents, working memory)."""


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(main)


_load_commands()
