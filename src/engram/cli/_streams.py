"""Standard input and output of the command line, when they are closed or cannot be written.

A closed standard input (``<&-``) or output (``>&-``), or an output that refuses a write
(``> /dev/full``, a full disk, a closed pipe) is one line and exit status 1, never a
traceback and never a success that printed nothing. With standard output closed, no
command runs: its result would go nowhere (and the next file opened would take its
descriptor).
"""

from __future__ import annotations

import os
import sys

import click


def read_stdin(what: str) -> str:
    """All of standard input, read for ``what``."""
    if sys.stdin is None:
        raise click.ClickException(f"standard input is closed: nothing to read {what} from")
    return sys.stdin.read()


def require_stdin(what: str) -> None:
    """Refuse to go on when standard input, which ``what`` needs, is closed."""
    if sys.stdin is None:
        raise click.ClickException(f"standard input is closed: {what}")


def confirm(question: str) -> None:
    """Ask ``question``; anything but yes aborts (a closed standard input too)."""
    require_stdin("pass --yes to confirm")
    click.confirm(question, abort=True)


def require_stdout() -> None:
    """Refuse to run a command whose result would go nowhere."""
    if sys.stdout is None:
        raise click.ClickException("standard output is closed: the result would be lost")


def failed(exc: OSError, consequence: str = "") -> click.ClickException:
    """An :class:`OSError` a command let through (most often a write to standard output
    that failed) as one line; what standard output could not take is dropped, so that
    the exit does not fail on it again."""
    _drop_unwritable_stdout()
    return click.ClickException(f"{type(exc).__name__}: {exc}{consequence}")


def _drop_unwritable_stdout() -> None:
    """Point standard output at nowhere if it still refuses what it holds."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
