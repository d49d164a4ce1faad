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
    return click.option(
        "--tenant",
        required=required and default is None,
        default=default,
        show_default=default is not None,
        envvar=TENANT_ENV,
        show_envvar=True,
        help="Tenant id of the principal.",
    )


def user_option(*, required: bool = True, default: str | None = None) -> Callable[[F], F]:
    """``--user ID`` (``$ENGRAM_USER``)."""
    return click.option(
        "--user",
        required=required and default is None,
        default=default,
        show_default=default is not None,
        envvar=USER_ENV,
        show_envvar=True,
        help="User id of the principal.",
    )
