"""The ``--embedder`` option shared by every command, with the names of :mod:`engram.recall`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from engram.recall import EMBEDDER_HELP, Embedder, embedder_from_name

F = TypeVar("F", bound=Callable[..., Any])
KEYWORD_ONLY = "none"
"""The extra name of commands that also work without an embedder (keyword search only)."""


def embedder_option(default: str, purpose: str, *, keyword_only: bool = False) -> Callable[[F], F]:
    """``--embedder NAME`` (see :func:`engram.recall.embedder_from_name`) with ``purpose`` first."""
    extra = f" Or {KEYWORD_ONLY}: keyword search only." if keyword_only else ""
    return click.option(
        "--embedder", default=default, show_default=True, help=f"{purpose} {EMBEDDER_HELP}{extra}"
    )


def embedder_or_none(name: str) -> Embedder | None:
    """No embedder for ``none``, else :func:`engram.recall.embedder_from_name` (1 thread)."""
    return None if name == KEYWORD_ONLY else embedder_from_name(name)
