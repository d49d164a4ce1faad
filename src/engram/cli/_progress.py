"""Progress bars of the long commands (``eval``, ``memory re-embed``, ``docs sync``):
tqdm on standard error, so standard output keeps only the result."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

quiet_option: Callable[[F], F] = click.option("--quiet", is_flag=True, help="No progress bar.")


@contextmanager
def progress(
    label: str, unit: str, *, total: int | None = None, quiet: bool = False
) -> Iterator[Callable[[int], object]]:
    """A bar on stderr counting ``unit``s (of ``total`` when known); yields ``update(n)``."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit=unit, disable=quiet, file=sys.stderr)
    try:
        yield bar.update
    finally:
        bar.close()


@contextmanager
def progress_of_total(
    label: str, unit: str, *, quiet: bool = False
) -> Iterator[Callable[[int], Callable[[int], object]]]:
    """Like :func:`progress` for an API that says its total first: yields ``start(total)``,
    which opens the bar and returns its ``update(n)``."""
    from tqdm import tqdm

    bars: list[Any] = []

    def start(total: int) -> Callable[[int], object]:
        bar = tqdm(total=total, desc=label, unit=unit, disable=quiet, file=sys.stderr)
        bars.append(bar)
        update: Callable[[int], object] = bar.update
        return update

    try:
        yield start
    finally:
        for bar in bars:
            bar.close()
