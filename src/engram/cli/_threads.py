"""``engram threads ...``: list, inspect, diff, fork, prune and size hot-tier threads.

A thin skin over :class:`engram.stores.hot.Threads`; each command is the
kebab-case name of one method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from engram._principal import Principal
from engram.cli._existing import existing_url
from engram.cli._options import home_option, tenant_option, user_option
from engram.config import default_url
from engram.errors import InvalidInputError, NotFoundError
from engram.stores.hot import Threads, open_checkpointer
from engram.stores.hot.contract import checkpoint_info, user_channels

F = TypeVar("F", bound=Callable[..., Any])


def _options(command: F) -> F:
    """--url/--home name the hot tier; --tenant/--user (both or neither) scope to one user."""
    for decorator in (
        user_option(required=False),
        tenant_option(required=False),
        home_option("its checkpoints.db is the hot tier unless --url"),
        click.option(
            "--url", default=None, help="Hot tier URL (default: sqlite:///<home>/checkpoints.db)."
        ),
    ):
        command = decorator(command)
    return command


def _principal(tenant: str | None, user: str | None) -> Principal | None:
    """The scope of --tenant/--user (an empty one is refused, never read as no scope)."""
    if (tenant is None) != (user is None):
        raise InvalidInputError("--tenant and --user go together")
    return None if tenant is None or user is None else Principal(tenant, user)


@contextmanager
def _threads(url: str | None, home: Path) -> Iterator[Threads]:
    """The hot tier at ``url`` (or under ``home``); every command here needs a store that
    already exists."""
    where = existing_url(url or default_url("hot", home), "hot-tier store")
    with open_checkpointer(where) as saver:
        yield Threads(saver)


@click.group("threads")
def threads() -> None:
    """Inspect and manage durable agent threads (the hot tier)."""


@threads.command("list-threads")
@_options
def list_threads(url: str | None, home: Path, tenant: str | None, user: str | None) -> None:
    """List threads, newest first (only one user's with --tenant/--user).

    Example: engram threads list-threads --tenant acme --user alice
    """
    with _threads(url, home) as api:
        for t in api.list_threads(_principal(tenant, user)):
            when = t.updated_at.isoformat(timespec="seconds") if t.updated_at else "-"
            owner = f"{t.tenant_id}/{t.user_id}" if t.tenant_id else "-"
            click.echo(f"{t.thread_id}\t{owner}\t{t.checkpoints} checkpoints\t{when}")


@threads.command("history")
@click.argument("thread_id")
@click.option("--limit", type=int, default=None, help="Show at most this many checkpoints.")
@_options
def history(
    thread_id: str,
    limit: int | None,
    url: str | None,
    home: Path,
    tenant: str | None,
    user: str | None,
) -> None:
    """Show a thread's checkpoints, newest first.

    Example: engram threads history analyst-1 --limit 5
    """
    with _threads(url, home) as api:
        owner = _principal(tenant, user)
        api.get(thread_id, None, owner)  # an unknown thread is an error, not an empty list
        for c in api.history(thread_id, owner, limit):
            writes = f"\t{c.pending_writes} pending writes" if c.pending_writes else ""
            click.echo(f"{c.checkpoint_id}\tstep {c.step}\t{c.source}\t{c.created_at}{writes}")


@threads.command("get")
@click.argument("thread_id")
@click.argument("checkpoint_id", required=False)
@_options
def get(
    thread_id: str,
    checkpoint_id: str | None,
    url: str | None,
    home: Path,
    tenant: str | None,
    user: str | None,
) -> None:
    """Show a checkpoint's state, channel by channel (default: the latest).

    Example: engram threads get analyst-1
    """
    with _threads(url, home) as api:
        tup = api.get(thread_id, checkpoint_id, _principal(tenant, user))
        info = checkpoint_info(tup)
        click.echo(f"{info.checkpoint_id}\tstep {info.step}\t{info.source}\t{info.created_at}")
        for channel, value in sorted(user_channels(tup.checkpoint["channel_values"]).items()):
            text = repr(value)
            click.echo(f"  {channel}: {text if len(text) <= 200 else text[:197] + '...'}")
        for task_id, channel, _ in tup.pending_writes or ():
            click.echo(f"  pending write: task {task_id} -> {channel}")


@threads.command("diff")
@click.argument("thread_id")
@click.argument("from_checkpoint")
@click.argument("to_checkpoint", required=False)
@_options
def diff(
    thread_id: str,
    from_checkpoint: str,
    to_checkpoint: str | None,
    url: str | None,
    home: Path,
    tenant: str | None,
    user: str | None,
) -> None:
    """Show what changed between two checkpoints (default target: the latest).

    Example: engram threads diff analyst-1 1f0c2a... 1f0c2b...
    """
    with _threads(url, home) as api:
        state_diff = api.diff(thread_id, from_checkpoint, to_checkpoint, _principal(tenant, user))
        click.echo(state_diff.render())


@threads.command("fork")
@click.argument("thread_id")
@click.argument("checkpoint_id")
@click.option("--to", "new_thread_id", default=None, help="Id of the new thread.")
@_options
def fork(
    thread_id: str,
    checkpoint_id: str,
    new_thread_id: str | None,
    url: str | None,
    home: Path,
    tenant: str | None,
    user: str | None,
) -> None:
    """Start a new thread from any checkpoint; the original is left untouched.

    Example: engram threads fork analyst-1 1f0c2a... --to analyst-1-retry
    """
    with _threads(url, home) as api:
        result = api.fork(thread_id, checkpoint_id, new_thread_id, _principal(tenant, user))
        click.echo(f"forked {thread_id}#{checkpoint_id} -> {result.thread_id}")


@threads.command("prune")
@click.argument("thread_id")
@click.option("--keep", "keep_last", type=int, required=True, help="Checkpoints to keep.")
@_options
def prune(
    thread_id: str,
    keep_last: int,
    url: str | None,
    home: Path,
    tenant: str | None,
    user: str | None,
) -> None:
    """Delete all but the newest checkpoints of a thread (with their writes and blobs).

    Example: engram threads prune analyst-1 --keep 10
    """
    with _threads(url, home) as api:
        owner = _principal(tenant, user)
        api.get(thread_id, None, owner)  # pruning nothing is an error
        report = api.prune(thread_id, keep_last, owner)
        click.echo(
            f"{thread_id}: kept {report.kept} checkpoints, deleted {report.deleted_checkpoints}"
            f" checkpoints, {report.deleted_writes} writes, {report.deleted_blobs} blobs"
        )


@threads.command("sizes")
@click.argument("thread_ids", nargs=-1)
@_options
def sizes(
    thread_ids: tuple[str, ...], url: str | None, home: Path, tenant: str | None, user: str | None
) -> None:
    """Show rows and bytes each thread takes (all threads when none is named).

    Example: engram threads sizes analyst-1 analyst-2
    """
    with _threads(url, home) as api:
        found = api.sizes(list(thread_ids) or None, _principal(tenant, user))
    for s in found:
        click.echo(
            f"{s.thread_id}\t{s.checkpoints} checkpoints\t{s.writes} writes\t{s.blobs} blobs"
            f"\t{s.total_bytes} bytes"
        )
    missing = sorted(set(thread_ids) - {s.thread_id for s in found})
    if missing:
        raise NotFoundError(f"no thread {', '.join(map(repr, missing))} for this scope")


def register(main: click.Group) -> None:
    main.add_command(threads)
