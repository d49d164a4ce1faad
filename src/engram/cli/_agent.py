"""``engram agent ...``: the Market Analyst from the command line.

A thin skin over :class:`engram.agent.MarketAnalyst`: each ``agent`` command is
the kebab-case name of one of its methods. The principal comes from ``--tenant``
/ ``--user`` (or ``ENGRAM_TENANT`` / ``ENGRAM_USER``); thread ids authorise nothing.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from engram._principal import Principal
from engram.agent import MarketAnalyst, PublicationLedger, StepEvent, ThreadStatus
from engram.cli._embedding import embedder_option, embedder_or_none
from engram.cli._existing import existing_home, existing_url
from engram.cli._options import home_option, tenant_option, user_option
from engram.config import default_url
from engram.errors import ConflictError, InvalidInputError
from engram.memory import Memory

DEMO_TENANT = "demo"
DEMO_USER = "analyst"

_home = home_option("checkpoints.db, outbox.db and, with memory, the other tiers")
_hot_url = click.option(
    "--url",
    "--hot-url",
    "hot_url",
    default=None,
    envvar="ENGRAM_HOT_URL",
    show_envvar=True,
    help="Hot tier (checkpoint store) URL (default: sqlite:///<home>/checkpoints.db).",
)
_model = click.option(
    "--model",
    default="offline",
    show_default=True,
    envvar="ENGRAM_AGENT_MODEL",
    help="'offline' (rule-based, no LLM) or any LangChain 'provider:model'.",
)
_tenant = tenant_option(default=DEMO_TENANT)
_user = user_option(default=DEMO_USER)
_json = click.option("--json", "as_json", is_flag=True, help="Print the thread status as JSON.")
_memory_embedder = embedder_option(
    "minilm", "Embedder of the memory layer (with --memory).", keyword_only=True
)


def _use_memory(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--memory/--no-memory`` for a new thread (default: memory)."""
    flag = click.option(
        "--memory/--no-memory",
        "use_memory",
        default=True,
        show_default=True,
        help="Recall facts and conventions from the memory layer under --home before "
        "planning; file the brief and remember stated facts after publish. The thread "
        "remembers it.",
    )
    return flag(_memory_embedder(func))


def _thread_memory(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--memory/--no-memory`` for an existing thread (default: as it was started)."""
    flag = click.option(
        "--memory/--no-memory",
        "use_memory",
        default=None,
        help="Continue with the memory layer or without (default: as the thread was started).",
    )
    return flag(_memory_embedder(func))


def _memory_of(
    analyst: MarketAnalyst, principal: Principal, thread_id: str, asked: bool | None
) -> bool:
    """Whether to open memory for an existing thread: as it was started, never otherwise."""
    started = analyst.status(principal, thread_id).uses_memory
    if asked is not None and asked != started:
        how = "with" if started else "without"
        raise ConflictError(f"thread {thread_id!r} was started {how} memory; drop the flag")
    return started


def _options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in (_json, _user, _tenant, _model, _hot_url, _home):
        func = option(func)
    return func


def _analyst(
    home: Path, hot_url: str | None, model: str, memory: Memory | None = None
) -> MarketAnalyst:
    return MarketAnalyst(home=home, hot_url=hot_url, model=model, memory=memory)


def _existing(home: Path, hot_url: str | None, model: str) -> MarketAnalyst:
    """The analyst over a hot tier that exists: a command on a thread creates no store."""
    existing_url(hot_url or default_url("hot", home), "hot-tier store")
    return _analyst(home, hot_url, model)


@contextmanager
def _memory(home: Path, use_memory: bool, embedder: str) -> Iterator[Memory | None]:
    if not use_memory:
        yield None
        return
    with Memory.open(home, embedder=embedder_or_none(embedder)) as memory:
        yield memory


def _echo_event(event: StepEvent) -> None:
    click.echo(f"  [{event.node}] {event.summary}")


def _status_dict(status: ThreadStatus) -> dict[str, Any]:
    data = dataclasses.asdict(status)
    data["principal"] = {
        "tenant_id": status.principal.tenant_id,
        "user_id": status.principal.user_id,
    }
    return data


def print_status(status: ThreadStatus, as_json: bool = False, show_draft: bool = False) -> None:
    """Print a thread's status (one line per field, or JSON)."""
    if as_json:
        click.echo(json.dumps(_status_dict(status), indent=1, sort_keys=True))
        return
    click.echo(f"thread {status.thread_id}: {status.stage}")
    click.echo(f"  tickers: {', '.join(status.tickers) or '-'}; tool calls: {status.tool_calls}")
    if status.review:
        click.echo(f"  review: {status.review['verdict']} (score {status.review['score']})")
    if status.draft_hash:
        click.echo(f"  draft hash: {status.draft_hash[:12]}")
    if status.publication:
        click.echo(f"  published at {status.publication['published_at']}")
    if show_draft and status.draft:
        click.echo("")
        click.echo(status.draft)


@click.group("agent")
def agent() -> None:
    """Run, resume, approve and inspect Market Analyst threads."""


@agent.command("run")
@click.argument("request")
@click.option("--thread", "thread_id", default=None, help="Thread id (default: a new one).")
@click.option("--fact", "facts", multiple=True, help="A recalled user fact for the planner.")
@click.option("--convention", "conventions", multiple=True, help="A project convention.")
@_use_memory
@_options
def run_cmd(
    request: str,
    thread_id: str | None,
    facts: tuple[str, ...],
    conventions: tuple[str, ...],
    use_memory: bool,
    embedder: str,
    home: Path,
    hot_url: str | None,
    model: str,
    tenant: str,
    user: str,
    as_json: bool,
) -> None:
    """Start a thread on REQUEST; it stops before publishing, awaiting approval.

    Example: engram agent run "Compare NVDA and AMD" --thread t1
    """
    with _memory(home, use_memory, embedder) as memory:
        status = _analyst(home, hot_url, model, memory).run(
            Principal(tenant, user),
            request,
            thread_id=thread_id,
            user_facts=facts,
            conventions=conventions,
            on_event=None if as_json else _echo_event,
        )
    print_status(status, as_json, show_draft=True)


@agent.command("resume")
@click.argument("thread_id")
@_thread_memory
@_options
def resume_cmd(
    thread_id: str,
    use_memory: bool | None,
    embedder: str,
    home: Path,
    hot_url: str | None,
    model: str,
    tenant: str,
    user: str,
    as_json: bool,
) -> None:
    """Continue an interrupted thread from its last checkpoint (never past an approval).

    Example: engram agent resume t1
    """
    principal = Principal(tenant, user)
    started = _memory_of(_existing(home, hot_url, model), principal, thread_id, use_memory)
    with _memory(home, started, embedder) as memory:
        status = _analyst(home, hot_url, model, memory).resume(
            principal, thread_id, on_event=None if as_json else _echo_event
        )
    print_status(status, as_json)


@agent.command("approve")
@click.argument("thread_id")
@click.option(
    "--draft-hash",
    default=None,
    help="SHA-256 of the draft you read, or its first 8+ hex digits (agent status --draft).",
)
@click.option(
    "--approve-unseen",
    is_flag=True,
    help="Publish whatever the paused draft is, without naming its hash (not recommended).",
)
@click.option("--approver", default=None, help="Who approves (default: the user).")
@_thread_memory
@_options
def approve_cmd(
    thread_id: str,
    draft_hash: str | None,
    approve_unseen: bool,
    approver: str | None,
    use_memory: bool | None,
    embedder: str,
    home: Path,
    hot_url: str | None,
    model: str,
    tenant: str,
    user: str,
    as_json: bool,
) -> None:
    """Approve the paused draft of a thread and publish it (exactly once).

    The approval names the draft you read by its hash, so a draft that changed since
    is refused.

    Example: engram agent approve t1 --draft-hash 38bfd73a6dfe
    """
    pinned = _draft_hash(draft_hash, approve_unseen, thread_id)
    principal = Principal(tenant, user)
    started = _memory_of(_existing(home, hot_url, model), principal, thread_id, use_memory)
    with _memory(home, started, embedder) as memory:
        status = _analyst(home, hot_url, model, memory).approve(
            principal,
            thread_id,
            draft_hash=pinned,
            approver=approver,
            on_event=None if as_json else _echo_event,
        )
    print_status(status, as_json)


_HASH_PREFIX = re.compile(r"[0-9a-f]{8,64}")


def _draft_hash(draft_hash: str | None, approve_unseen: bool, thread_id: str) -> str | None:
    """The hash prefix to pin, or ``None`` only when the approval is explicitly unseen."""
    if draft_hash is None and not approve_unseen:
        raise InvalidInputError(
            f"name the draft you approve: --draft-hash <hash> (engram agent status {thread_id} "
            "--draft shows it), or --approve-unseen"
        )
    if draft_hash is None:
        return None
    if approve_unseen:
        raise InvalidInputError("--draft-hash and --approve-unseen exclude each other")
    if not _HASH_PREFIX.fullmatch(draft_hash.lower()):
        raise InvalidInputError(f"--draft-hash must be 8 to 64 hex digits, got {draft_hash!r}")
    return draft_hash.lower()


@agent.command("status")
@click.argument("thread_id")
@click.option("--draft", "show_draft", is_flag=True, help="Also print the draft.")
@_options
def status_cmd(
    thread_id: str,
    show_draft: bool,
    home: Path,
    hot_url: str | None,
    model: str,
    tenant: str,
    user: str,
    as_json: bool,
) -> None:
    """Show a thread's stage, review, draft hash and publication.

    Example: engram agent status t1 --draft
    """
    status = _existing(home, hot_url, model).status(Principal(tenant, user), thread_id)
    print_status(status, as_json, show_draft)


@agent.command("history")
@click.argument("thread_id")
@_options
def history_cmd(
    thread_id: str,
    home: Path,
    hot_url: str | None,
    model: str,
    tenant: str,
    user: str,
    as_json: bool,
) -> None:
    """List a thread's checkpoints, oldest first: step, source, node run, next node.

    Example: engram agent history t1
    """
    infos = _existing(home, hot_url, model).history(Principal(tenant, user), thread_id)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(i) for i in infos], indent=1))
        return
    print_history(infos)


def print_history(infos: list[Any]) -> None:
    """A table of checkpoints: step, source, what ran, what is next."""
    click.echo(f"  {'step':>4}  {'source':<7} {'ran':<10} {'next':<10} checkpoint")
    for i in infos:
        ran, nxt = ",".join(i.ran) or "-", ",".join(i.next_nodes) or "(end)"
        click.echo(f"  {i.step:>4}  {i.source:<7} {ran:<10} {nxt:<10} {i.checkpoint_id}")


@agent.command("publications")
@_options
def publications_cmd(
    home: Path, hot_url: str | None, model: str, tenant: str, user: str, as_json: bool
) -> None:
    """List the reports published for the user (from the outbox).

    Example: engram agent publications --tenant demo --user analyst
    """
    existing_home(home)
    analyst = _analyst(home, hot_url, model)
    ledger = analyst.ledger  # a missing outbox file: nothing was published
    found = not isinstance(ledger, PublicationLedger) or ledger.path.is_file()
    rows = analyst.publications(Principal(tenant, user)) if found else []
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(r) for r in rows], indent=1))
        return
    for row in rows:
        click.echo(f"{row.published_at}  {row.thread_id}  key {row.idempotency_key[:12]}")


def register(main: click.Group) -> None:
    """Add ``engram agent ...`` to the CLI."""
    main.add_command(agent)
