"""``engram memory ...``: remember, recall, forget, history and re-embed long-term facts.

A thin skin over :class:`engram.stores.cold.LongTermStore`; each command is the
kebab-case name of one method.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import click

from engram._principal import Principal
from engram._validate import shown
from engram.cli._embedding import embedder_option
from engram.cli._existing import existing_url
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._progress import progress, quiet_option
from engram.config import default_url
from engram.errors import NotFoundError
from engram.policy import PoisoningGuard, WritePolicy
from engram.recall import embedder_from_name
from engram.stores.cold import LongTermStore, MemoryRecord, View, open_store

F = TypeVar("F", bound=Callable[..., Any])


_url = click.option(
    "--url", default=None, help="Cold tier URL (default: sqlite:///<home>/memory.db)."
)
_home = home_option("its memory.db is the cold tier unless --url")


def _options(command: F) -> F:
    for decorator in (
        embedder_option("minilm", "Embedding model (must match the store's)."),
        _home,
        _url,
        user_option(),
        tenant_option(),
    ):
        command = decorator(command)
    return command


@contextmanager
def _store(
    url: str | None, home: Path, embedder: str | None, *, create: bool = False
) -> Iterator[LongTermStore]:
    """The cold tier at ``url`` (or under ``home``); only ``create`` (a write) may start
    a new store."""
    chosen = embedder_from_name(embedder) if embedder else None
    url = url or default_url("cold", home)
    url = url if create else existing_url(url, "cold-tier store")
    with open_store(
        url, embedder=chosen, policy=WritePolicy(guard=PoisoningGuard(chosen))
    ) as store:
        yield store


def _line(record: MemoryRecord) -> str:
    until = f" until {record.valid_to.isoformat(timespec='seconds')}" if record.valid_to else ""
    tags = ",".join(record.tags) or "-"
    when = record.recorded_at.isoformat(timespec="seconds")
    return f"{record.key}\t{when}{until}\t[{tags}]\t{record.text}"


@click.group("memory")
def memory() -> None:
    """Long-term facts about a user (the cold tier)."""


@memory.command("remember")
@click.argument("text")
@click.option(
    "--tag",
    "tags",
    multiple=True,
    default=("fact",),
    show_default=True,
    help="A stable tag (fact, preference, profile...).",
)
@click.option("--slot", default=None, help="What the fact is about; a new value supersedes.")
@click.option("--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--source", type=click.Choice(["user", "tool", "policy", "agent"]), default="user")
@click.option("--ttl-days", type=float, default=None, help="Expire after this many days.")
@_options
def remember(
    text: str,
    tags: tuple[str, ...],
    slot: str | None,
    importance: float,
    source: Any,
    ttl_days: float | None,
    tenant: str,
    user: str,
    url: str | None,
    home: Path,
    embedder: str,
) -> None:
    """Remember a fact through the default write policy; prints what happened
    (added/updated/deleted/noop) and why. A rejected or held write exits with status 1.

    Example: engram memory remember "Likes tea" --tag preference --tenant acme --user alice
    """
    ttl = None if ttl_days is None else timedelta(days=ttl_days)
    with _store(url, home, embedder, create=True) as store:
        result = store.remember(
            Principal(tenant, user),
            text,
            tags=tags,
            slot=slot,
            importance=importance,
            source=source,
            ttl=ttl,
        )
    if result.action in ("rejected", "held"):
        raise click.ClickException(f"not remembered ({result.action}): {result.reason or '-'}")
    key = result.record.key if result.record else (result.previous.key if result.previous else "-")
    click.echo(f"{result.action}\t{key}\t{result.reason or ''}")


@memory.command("recall")
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="How many facts.")
@click.option("--tag", "tags", multiple=True, help="Only facts with one of these tags.")
@click.option("--as-of", type=click.DateTime(), default=None, help="What was valid then (UTC).")
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@_options
def recall(
    query: str,
    k: int,
    tags: tuple[str, ...],
    as_of: datetime | None,
    min_score: float,
    as_json: bool,
    tenant: str,
    user: str,
    url: str | None,
    home: Path,
    embedder: str,
) -> None:
    """Recall the facts that best answer QUERY, best first, with their scores.

    Example: engram memory recall "seat preference" -k 3 --tenant acme --user alice
    """
    with _store(url, home, embedder) as store:
        found = store.recall(
            Principal(tenant, user), query, k=k, tags=tags, as_of=as_of, min_score=min_score
        )
    for r in found:
        if as_json:
            click.echo(json.dumps({"key": r.record.key, "text": r.record.text, "score": r.score}))
        else:
            click.echo(f"{r.score:.3f}\t{_line(r.record)}")


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _fact_json(record: MemoryRecord) -> dict[str, Any]:
    return {
        "key": record.key,
        "text": record.text,
        "tags": list(record.tags),
        "source": record.source,
        "valid_from": _iso(record.valid_from),
        "valid_to": _iso(record.valid_to),
        "expires_at": _iso(record.expires_at),
        "recorded_at": _iso(record.recorded_at),
        "current": record.superseded_by is None,
        "provenance": record.provenance.to_json(),
    }


def _fact_row(record: MemoryRecord) -> tuple[str, ...]:
    """KEY, VALID (from -> to, or now; expiry), TAGS, SOURCE THREAD/CHECKPOINT, TEXT."""
    until = _iso(record.valid_to) or "now"
    if record.expires_at is not None:
        until += f" (expires {_iso(record.expires_at)})"
    origin = record.provenance
    where = f"{record.source} {origin.thread_id or '-'}/{origin.checkpoint_id or '-'}"
    tags = ",".join(record.tags) or "-"
    return (record.key, f"{_iso(record.valid_from)} -> {until}", tags, where, record.text)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as aligned columns (the last one, the text, left as it is)."""
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in (header, *rows)
    ]


@memory.command("list")
@click.option("--all", "include_history", is_flag=True, help="Superseded and expired too.")
@click.option("--tag", "tags", multiple=True, help="Only facts with one of these tags.")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@_options
def list_facts(
    include_history: bool,
    tags: tuple[str, ...],
    limit: int,
    as_json: bool,
    tenant: str,
    user: str,
    url: str | None,
    home: Path,
    embedder: str,
) -> None:
    """List the user's facts, newest first: key, validity (valid from -> to), tags,
    source and provenance (thread/checkpoint), text. Current facts only unless --all.

    Example: engram memory list --tenant acme --user alice --json
    """
    with _store(url, home, None) as store:
        view = View(
            store.now(), include_expired=include_history, include_superseded=include_history
        )
        found = store.records(Principal(tenant, user), view, tags=tags, limit=limit)
    if as_json:
        for record in found:
            click.echo(json.dumps(_fact_json(record), sort_keys=True))
        return
    if not found:
        click.echo(f"(no facts for {tenant}/{user})")
        return
    header = ("KEY", "VALID", "TAGS", "SOURCE THREAD/CHECKPOINT", "TEXT")
    for line in _table(header, [_fact_row(r) for r in found]):
        click.echo(line.rstrip())


@memory.command("history")
@click.argument("key")
@_options
def history(key: str, tenant: str, user: str, url: str | None, home: Path, embedder: str) -> None:
    """Show every version of one fact, oldest first.

    Example: engram memory history 3f2a9c --tenant acme --user alice
    """
    with _store(url, home, None) as store:
        versions = store.history(Principal(tenant, user), key)
    if not versions:
        raise NotFoundError(f"no fact {shown(key)} for {tenant}/{user}")
    for record in versions:
        click.echo(_line(record))


@memory.command("forget-facts")
@click.option("--key", "keys", multiple=True, help="Only these keys (default: every fact).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_options
def forget_facts(
    keys: tuple[str, ...],
    yes: bool,
    tenant: str,
    user: str,
    url: str | None,
    home: Path,
    embedder: str,
) -> None:
    """Erase a user's long-term facts only (or only --key ones) and print the report;
    threads and documents stay (``engram forget`` erases the user from every tier).

    Example: engram memory forget-facts --tenant acme --user alice --yes
    """
    if not yes:
        click.confirm(
            f"Erase {'the given facts' if keys else 'every fact'} of {tenant}/{user}?", abort=True
        )
    with _store(url, home, None) as store:
        report = store.forget(Principal(tenant, user), list(keys) or None)
    click.echo(
        f"keys={report.keys} versions={report.versions} vectors={report.vectors} "
        f"keyword_entries={report.keyword_entries} caches={report.caches_cleared} "
        f"compacted={report.compacted}"
    )


@memory.command(
    "forget", hidden=True, context_settings={"ignore_unknown_options": True}, add_help_option=False
)
@click.argument("ignored", nargs=-1, type=click.UNPROCESSED)
def forget_renamed(ignored: tuple[str, ...]) -> None:
    """The old name, kept only to say where it went (it erased facts alone).

    Example: engram memory forget-facts --tenant acme --user alice --yes
    """
    raise click.UsageError(
        "engram memory forget is now engram memory forget-facts (long-term facts only); "
        "engram forget erases the user from every tier"
    )


@memory.command("re-embed")
@_url
@_home
@embedder_option("minilm", "The new embedding model.")
@click.option("--batch-size", type=int, default=256, show_default=True)
@quiet_option
def re_embed(url: str | None, home: Path, embedder: str, batch_size: int, quiet: bool) -> None:
    """Re-embed every stored fact with a new embedding model (progress on stderr).

    Example: engram memory re-embed --embedder minilm
    """
    with _store(url, home, None) as store, progress("re-embed", " facts", quiet=quiet) as update:
        done = store.re_embed(embedder_from_name(embedder), batch_size=batch_size, progress=update)
    click.echo(f"re-embedded {done} versions")


def register(main: click.Group) -> None:
    main.add_command(memory)
