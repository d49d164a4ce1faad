"""``engram import FILE``: facts from JSON Lines (or an ``engram export`` document) through
:meth:`engram.Memory.remember_many`.

Every line is checked first; a bad one stops the import before anything is written.
A line that names its version (``key``, ``valid_from``) is not written again when a
stored version of that key or start has its text, nor is a line already waiting in the
review queue; other lines rely on consolidation, which ignores a fact already stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Literal

import click

from engram._principal import Principal
from engram.cli._embedding import embedder_option
from engram.cli._layer import open_memory
from engram.cli._lines import Item, Line, exported, read_lines, runs
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._progress import progress, quiet_option
from engram.cli._streams import read_stdin
from engram.errors import HeldForReviewError, InvalidInputError
from engram.memory import Memory, Observation, RememberResult
from engram.policy import redact

_COUNTED = ("stored", "superseded", "ignored", "deleted", "held", "refused")


@click.command("import")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--dry-run", is_flag=True, help="Check every line; write nothing.")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@quiet_option
@embedder_option(
    "minilm", "Embedding model (keep the one the memory was written with).", keyword_only=True
)
@click.option("--url", default=None, help="All tiers on one PostgreSQL URL (not --home).")
@home_option("every tier, unless --url", default=None)
@user_option(required=False)
@tenant_option()
def import_cmd(
    source: str,
    dry_run: bool,
    batch_size: int,
    quiet: bool,
    embedder: str,
    url: str | None,
    home: Path | None,
    user: str | None,
    tenant: str,
) -> None:
    """Remember facts from a JSON Lines file or an export, checked before any is written.

    FILE holds one fact per line (- reads standard input), for --tenant, each for --user
    or its line's user field; it prints what happened.

    Every line is checked before anything is written: a bad line (not JSON, an unknown
    field, a time without a zone...) exits 1 naming it. An engram export document is
    read as its facts, oldest first.

    Example: engram import facts.jsonl --tenant acme --user alice
    """
    lines = read_lines(_text(source))
    groups = list(runs(lines, tenant, user))
    if dry_run:
        users = len({who for who, _ in groups})
        click.echo(f"{len(lines)} facts checked for {users} users; nothing written")
        return
    counts: Counter[str] = Counter()
    with (
        open_memory(home, url, embedder, create=True) as memory,
        progress("importing", "fact", total=len(lines), quiet=quiet) as update,
    ):
        _check(memory, groups)
        for who, group in groups:
            counts += _import(memory, who, group, batch_size, update)
    click.echo(", ".join(f"{counts[name]} {name}" for name in _COUNTED))
    if counts["refused"] and exported(lines):  # (an export read back must lose nothing)
        raise click.ClickException(f"{counts['refused']} facts of the export were refused")


def _text(source: str) -> str:
    try:
        if source == "-":
            return read_stdin("the facts")
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {source}: {exc}") from exc


def _check(memory: Memory, groups: list[tuple[Principal, list[Line]]]) -> None:
    """Every check a line to be written can fail, before any is written (an error names
    its line): the store's own (:meth:`Memory.check_fact`), and a start in the future
    only for a key of its own (no stored version, no earlier line)."""
    keys: dict[Principal, set[str | None]] = {}
    now = memory.now()
    for who, group in groups:
        held = keys.setdefault(who, {f.key for f in memory.facts(who)})
        skipped = _skipped(memory, who, group)
        for line in group:
            fact = line.fact
            if isinstance(fact, Item) or line.number in skipped:
                continue
            try:
                memory.check_fact(who, fact)
                if fact.valid_from is not None and fact.valid_from > now:
                    _starts_later(fact, held)
            except InvalidInputError as exc:
                raise InvalidInputError(f"{line.where}: {exc}") from None
            held.add(fact.key)


def _starts_later(fact: Observation, keys: set[str | None]) -> None:
    """Refuse ``fact``, starting in the future, unless it names a key of its own: a new
    value of a current fact takes over from now or earlier (the store refuses it then)."""
    if fact.key is None or fact.key in keys:
        raise InvalidInputError(
            "valid_from is in the future: such a line needs a key that no stored fact and "
            "no earlier line holds (a new value of a current fact takes over from now or "
            "an earlier moment)"
        )


def _skipped(memory: Memory, principal: Principal, group: list[Line]) -> set[int]:
    """Numbers of the lines not to write: written already, expired, or a superseded
    version that never held whose successor is not written (it would be current)."""
    done = _already(memory, principal, group) | _expired(memory, group)
    written = {line.id for line in group if line.number not in done}
    return done | {
        line.number for line in group if line.successor and line.successor not in written
    }


def _import(
    memory: Memory,
    principal: Principal,
    group: list[Line],
    batch_size: int,
    update: Callable[[int], object],
) -> Counter[str]:
    """Remember ``group``'s new lines for ``principal``; the counts of what happened."""
    done = _skipped(memory, principal, group)
    update(len(done))
    fresh = [line for line in group if line.number not in done]
    facts = [line for line in fresh if isinstance(line.fact, Observation)]
    observed = [line.fact for line in facts if isinstance(line.fact, Observation)]
    results = memory.remember_many(principal, observed, batch_size=batch_size, progress=update)
    counts = Counter(ignored=len(done))
    for line, result in zip(facts, results, strict=True):
        counts[_counted(result)] += 1
        counts["superseded"] += result.action == "updated"
        if result.action in ("held", "rejected"):
            click.echo(f"{line.where}: {result.action}: {result.reason or '-'}")
    for line in fresh:
        if isinstance(line.fact, Item):
            counts[_put(memory, principal, line.where, line.fact)] += 1
            update(1)
    return counts


def _put(memory: Memory, principal: Principal, where: str, item: Item) -> str:
    """Restore ``item`` as LangGraph's ``put`` wrote it (its ttl restarting now)."""
    ttl = None if item.ttl is None else item.ttl / timedelta(minutes=1)
    index: Literal[False] | None = None if item.text else False
    try:
        memory.store.put((*principal.namespace, *item.below), item.key, item.value, index, ttl=ttl)
    except HeldForReviewError as exc:
        click.echo(f"{where}: rejected: {exc}")
        return "refused"
    return "stored"


def _counted(result: RememberResult) -> str:
    if result.stored:
        return "stored"
    return "refused" if result.action == "rejected" else result.action


def _expired(memory: Memory, group: list[Line]) -> set[int]:
    """Numbers of the lines whose ``expires_at`` has passed (a fact that would already
    have been dropped: an export read back late)."""
    now = memory.now()
    return {
        line.number
        for line in group
        if line.fact.expires_at is not None and line.fact.expires_at <= now
    }


def _stored_item(memory: Memory, principal: Principal, item: Item) -> bool:
    """Whether ``item``'s key holds its value already (an earlier run restored it)."""
    found = memory.store.get((*principal.namespace, *item.below), item.key)
    return found is not None and found.value == item.value


def _already(memory: Memory, principal: Principal, group: list[Line]) -> set[int]:
    """Numbers of the lines an earlier run wrote: a line waiting in the review queue, or
    one that names its version (a ``key``, a ``valid_from`` or both) and whose text a
    stored version of that key or start already holds."""
    queued = {held.text for held in memory.review_queue(principal)}
    stored = [(f.key, f.text, f.valid_from) for f in memory.facts(principal)]
    marks = {
        mark
        for key, text, since in stored
        for mark in ((key, text, since), (key, text, None), (None, text, since))
    }
    done = set()
    for line in group:
        fact = line.fact
        if isinstance(fact, Item):
            if _stored_item(memory, principal, fact):
                done.add(line.number)
            continue
        text = redact(fact.text.strip(), memory.policy.redact_kinds)[0]
        named = fact.key is not None or fact.valid_from is not None
        if text in queued or (named and (fact.key, text, fact.valid_from) in marks):
            done.add(line.number)
    return done


def register(main: click.Group) -> None:
    """Add ``import`` to the CLI."""
    main.add_command(import_cmd)
