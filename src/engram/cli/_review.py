"""``engram review list | approve | discard``: the writes the poisoning guard held.

A thin skin over :meth:`engram.memory.Memory.review_queue`,
:meth:`~engram.memory.Memory.approve_held` and :meth:`~engram.memory.Memory.discard_held`,
acting for the principal given by ``--tenant`` / ``--user``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from engram._principal import Principal
from engram.cli._layer import layer_options, open_memory
from engram.memory import HeldWrite


def _origin(entry: HeldWrite) -> str:
    if entry.kind == "document":
        return f"document {entry.path}"
    return f"thread {entry.thread_id or '-'}, checkpoint {entry.checkpoint_id or '-'}"


@click.group("review")
def review() -> None:
    """Writes held for review (never recalled): list them, approve or discard one by id."""


@review.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@layer_options
def list_(
    as_json: bool, tenant: str, user: str, home: Path | None, url: str | None, embedder: str
) -> None:
    """List the user's held writes, oldest first: id, time, kind, origin, reason, text.

    Example: engram review list --tenant acme --user alice
    """
    with open_memory(home, url, embedder) as memory:
        entries = memory.review_queue(Principal(tenant, user))
    if as_json:
        click.echo(json.dumps([e.to_json() for e in entries], indent=1, sort_keys=True))
        return
    if not entries:
        click.echo("(nothing held for review)")
    for entry in entries:
        click.echo(f"{entry.id}  {entry.held_at}  {entry.kind}  {_origin(entry)}")
        click.echo(f"    reason: {entry.reason}")
        click.echo(f"    text:   {entry.text}")


@review.command("approve")
@click.argument("held_id")
@layer_options
def approve(
    held_id: str, tenant: str, user: str, home: Path | None, url: str | None, embedder: str
) -> None:
    """Store the held fact HELD_ID (an id from ``engram review list``, or its first
    digits) as the write it was, without the poisoning guard; it leaves the queue.

    Example: engram review approve 3f2a9c1b --tenant acme --user alice
    """
    with open_memory(home, url, embedder) as memory:
        result = memory.approve_held(Principal(tenant, user), held_id)
    click.echo(f"{result.action}: {result.text} (key {result.key or '-'})")


@review.command("discard")
@click.argument("held_id")
@layer_options
def discard(
    held_id: str, tenant: str, user: str, home: Path | None, url: str | None, embedder: str
) -> None:
    """Remove the held write HELD_ID from the queue; nothing is stored.

    Example: engram review discard 3f2a9c1b --tenant acme --user alice
    """
    with open_memory(home, url, embedder) as memory:
        entry = memory.discard_held(Principal(tenant, user), held_id)
    click.echo(f"discarded {entry.id}: {entry.text}")


def register(main: click.Group) -> None:
    """Add ``engram review`` to the CLI."""
    main.add_command(review)
