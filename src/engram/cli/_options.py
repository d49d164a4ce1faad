"""The options every command group shares: the same names, defaults and environment variables.

``--home`` (``$ENGRAM_HOME``, default ``./.engram``) is the folder of the embedded
default; a group's ``--url`` (its tier's URL) defaults to the file under it.
``--tenant`` (``$ENGRAM_TENANT``) and ``--user`` (``$ENGRAM_USER``) name the principal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from engram.config import DEFAULT_HOME

F = TypeVar("F", bound=Callable[..., Any])

HOME_ENV = "ENGRAM_HOME"
TENANT_ENV = "ENGRAM_TENANT"
USER_ENV = "ENGRAM_USER"


def home_option(purpose: str, *, default: Path | None = DEFAULT_HOME) -> Callable[[F], F]:
    """``--home DIR`` (``$ENGRAM_HOME``); ``default=None`` lets ``--url`` stand alone."""
    shown = "" if default is not None else f" (default: {DEFAULT_HOME})"
    return click.option(
        "--home",
        type=click.Path(path_type=Path, file_okay=False),
        default=default,
        show_default=default is not None,
        envvar=HOME_ENV,
        show_envvar=True,
        help=f"Folder of the embedded default: {purpose}.{shown}",
    )


def tenant_option(*, required: bool = True, default: str | None = None) -> Callable[[F], F]:
    """``--tenant ID`` (``$ENGRAM_TENANT``)."""
    return _principal_option("--tenant", TENANT_ENV, "Tenant", required, default)


def user_option(*, required: bool = True, default: str | None = None) -> Callable[[F], F]:
    """``--user ID`` (``$ENGRAM_USER``)."""
    return _principal_option("--user", USER_ENV, "User", required, default)


def _principal_option(
    name: str, variable: str, what: str, required: bool, default: str | None
) -> Callable[[F], F]:
    """A required option passes no ``default``: Click 8.5 takes an explicit ``None`` for a
    default given and stops enforcing ``required``."""
    shared: dict[str, Any] = {"envvar": variable, "show_envvar": True}
    shared["help"] = f"{what} id of the principal."
    if default is None:
        return click.option(name, required=required, **shared)
    return click.option(name, default=default, show_default=True, **shared)
