"""``engram remember | recall | forget | erasures | export``: the memory layer, in a shell.

A thin skin over :class:`engram.memory.Memory`: each command is the kebab-case
name of one method, acting for the principal given by ``--tenant`` / ``--user``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from engram._principal import Principal, validate_id
from engram.cli._embedding import embedder_option, embedder_or_none
from engram.cli._existing import existing_home
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._streams import confirm
from engram.config import DEFAULT_HOME
from engram.memory import Memory

F = TypeVar("F", bound=Callable[..., Any])


def layer_options(command: F) -> F:
    """The options of every memory-layer command: principal, home or URL, embedder."""
    for decorator in (
        embedder_option(
            "minilm",
            "Embedding model (keep the one the memory was written with).",
            keyword_only=True,
        ),
        click.option("--url", default=None, help="All tiers on one PostgreSQL URL (not --home)."),
        home_option("every tier, unless --url", default=None),
        user_option(),
        tenant_option(),
    ):
        command = decorator(command)
    return command


@contextmanager
def open_memory(
    home: Path | None, url: str | None, embedder: str, *, create: bool = False
) -> Iterator[Memory]:
    """The memory layer; only ``create`` (a write) may start a new embedded home."""
    if url is None and not create:
        existing_home(home or DEFAULT_HOME)
    with Memory.open(home, url=url, embedder=embedder_or_none(embedder)) as memory:
        yield memory


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, indent=1, sort_keys=True, default=str))


@click.command("remember")
@click.argument("observation")
@click.option("--slot", default=None, help="What the fact is about; a new value supersedes.")
@click.option("--tag", "tags", multiple=True, default=("fact",), show_default=True)
@click.option("--thread", "thread_id", default=None, help="Provenance: the thread id.")
@click.option("--checkpoint", "checkpoint_id", default=None, help="Provenance: checkpoint id.")
@click.option("--message", "message_ids", multiple=True, help="Provenance: a message id.")
@layer_options
def remember_cmd(
    observation: str,
    slot: str | None,
    tags: tuple[str, ...],
    thread_id: str | None,
    checkpoint_id: str | None,
    message_ids: tuple[str, ...],
    tenant: str,
    user: str,
    home: Path | None,
    url: str | None,
    embedder: str,
) -> None:
    """Remember OBSERVATION about the user (write policy, redaction, consolidation).

    Prints what happened: added, updated or ignored, and why; a write that is rejected or
    held for review exits with status 1 and says why.

    Example: engram remember "Prefers conservative risk" --slot risk --tag preference
    --tenant acme --user alice
    """
    with open_memory(home, url, embedder, create=True) as memory:
        result = memory.remember(
            Principal(tenant, user),
            observation,
            slot=slot,
            tags=tags,
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            message_ids=message_ids,
        )
    _refused(result.action, result.reason)
    click.echo(f"{result.action}: {result.reason or '-'} (key {result.key or '-'})")


def _refused(action: str, reason: str | None) -> None:
    """A write the policy rejected or held for review exits 1 with one line saying why."""
    if action in ("rejected", "held"):
        raise click.ClickException(f"not remembered ({action}): {reason or '-'}")


@click.command("recall")
@click.argument("query")
@click.option("--budget", "budget_tokens", type=int, default=800, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the items as JSON.")
@click.option(
    "--profile",
    type=click.Choice(["relevant", "all", "none"]),
    default="relevant",
    show_default=True,
    help="Which profile facts lead the block: those QUERY is about, every one, or none.",
)
@layer_options
def recall_cmd(
    query: str,
    budget_tokens: int,
    as_json: bool,
    profile: str,
    tenant: str,
    user: str,
    home: Path | None,
    url: str | None,
    embedder: str,
) -> None:
    """Print the context block for QUERY: profile, memories, documents, within a budget.

    Example: engram recall "Update my NVDA analysis" --budget 500 --tenant acme --user alice
    """
    with open_memory(home, url, embedder) as memory:
        include = {"relevant": None, "all": True, "none": False}[profile]
        block = memory.recall(
            Principal(tenant, user), query, budget_tokens, include_profile=include
        )
    if as_json:
        _dump([dataclasses.asdict(item) for item in block.items])
        return
    click.echo(block.text or "(nothing recalled)")
    click.echo(f"-- {block.tokens_used}/{block.budget_tokens} tokens, {block.dropped} left out")


@click.command("forget")
@click.option("--key", "keys", multiple=True, help="Only these facts (default: everything).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@layer_options
def forget_cmd(
    keys: tuple[str, ...],
    yes: bool,
    tenant: str,
    user: str,
    home: Path | None,
    url: str | None,
    embedder: str,
) -> None:
    """Erase the user from every tier (facts, history, documents, threads), the
    publication outbox and the user's API keys; print the report and, for a whole user,
    keep its audit record (see ``engram erasures``).

    Example: engram forget --tenant acme --user alice --yes
    """
    if not (yes or keys):
        confirm(f"Erase everything engram holds about {tenant}/{user}?")
    from engram.stores.audit import local_actor

    with open_memory(home, url, embedder) as memory:
        # a whole-user erasure is recorded in the log beside the tiers, as the server's
        report = memory.forget(
            Principal(tenant, user), list(keys) if keys else None, actor=local_actor("cli")
        )
    _dump(report.to_json())


@click.command("erasures")
@click.option("--limit", type=click.IntRange(1, 10_000), default=200, show_default=True)
@click.option("--url", default=None, help="The PostgreSQL URL the tiers live on (not --home).")
@home_option("its memory.db holds the log, unless --url", default=None)
@user_option(required=False)
@tenant_option()
def erasures_cmd(
    limit: int, home: Path | None, url: str | None, user: str | None, tenant: str
) -> None:
    """List the tenant's recorded erasures, newest first, as JSON lines (who, when, counts;
    never content); with ``--user``, that user's only.

    Example: engram erasures --tenant acme
    """
    from engram.stores.audit import open_audit

    validate_id("tenant_id", tenant)
    if url is None:
        existing_home(home or DEFAULT_HOME)
    with open_audit(home or DEFAULT_HOME, url=url) as log:
        records = log.list(tenant, limit if user is None else 10_000)
    if user is not None:
        records = [r for r in records if r.user_id == user][:limit]
    for record in records:
        line = dataclasses.asdict(record) | {"erased_at": record.erased_at.isoformat()}
        click.echo(json.dumps(line, sort_keys=True))


@click.command("export")
@layer_options
def export_cmd(tenant: str, user: str, home: Path | None, url: str | None, embedder: str) -> None:
    """Print everything engram holds about the user as JSON.

    Example: engram export --tenant acme --user alice > alice.json
    """
    with open_memory(home, url, embedder) as memory:
        click.echo(memory.export_json(Principal(tenant, user)))


def register(main: click.Group) -> None:
    """Add ``remember``, ``recall``, ``forget``, ``erasures`` and ``export`` to the CLI."""
    for command in (remember_cmd, recall_cmd, forget_cmd, erasures_cmd, export_cmd):
        main.add_command(command)
