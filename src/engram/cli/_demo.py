"""``engram demo``: the Market Analyst story, narrating each tier as it goes.

Each run acts for a principal of its own (tenant ``demo-<run>``), so it never reads or
erases anyone else's threads, facts or documents. What it makes stays under the home
for the user to explore; ``--clean`` erases what the recorded demo runs made.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import click
from langchain_core.runnables import RunnableConfig

from engram._files import private_file
from engram._principal import Principal
from engram.agent import DURABILITY, MarketAnalyst, PublicationLedger, ThreadStatus
from engram.cli._agent import (
    DEMO_TENANT,
    DEMO_USER,
    _echo_event,
    _home,
    _hot_url,
    _memory_embedder,
    print_history,
)
from engram.cli._embedding import embedder_or_none
from engram.config import default_url
from engram.errors import ConflictError, NotFoundError
from engram.memory import Locations, Memory
from engram.stores.hot import Threads, open_checkpointer

VISITOR = "visitor"
DEMO_RUNS = "demo-runs.jsonl"
"""Principals of each ``engram demo`` run under a home: what ``--clean`` erases."""

DEMO_REQUEST = (
    "Compare NVDA and AMD: which looks stronger this half-year? "
    "I'm a conservative investor and I want a competitor analysis."
)
DEMO_FOLLOW_UP = "Update my NVDA analysis"
DEMO_CONVENTIONS = ("Every brief ends with the data-set disclaimer",)
DEMO_VISITOR_FACT = "I prefer aggressive growth stocks"
CONVENTIONS_PATH = "conventions/briefs.md"


def _outbox(analyst: MarketAnalyst) -> str:
    ledger = analyst.ledger
    return str(ledger.path) if isinstance(ledger, PublicationLedger) else analyst.hot_url


def _say(title: str, text: str = "") -> None:
    click.secho(f"\n== {title}", bold=True)
    if text:
        click.echo(text)


def _indent(text: str, prefix: str = "  | ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


def _approve_in_new_process(
    home: Path, hot_url: str | None, principal: Principal, status: ThreadStatus, embedder: str
) -> str:
    """Run ``python -m engram agent approve`` in a child process and return its output."""
    assert status.draft_hash is not None
    cmd = [sys.executable, "-m", "engram", "agent", "approve", status.thread_id]
    cmd += ["--home", str(home.resolve()), "--tenant", principal.tenant_id]
    cmd += ["--user", principal.user_id, "--draft-hash", status.draft_hash[:12]]
    cmd += ["--embedder", embedder]
    if hot_url:
        cmd += ["--hot-url", hot_url]
    click.echo("$ python -m engram " + " ".join(shlex.quote(c) for c in cmd[3:]))
    child = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise ConflictError(f"the approving process failed: {child.stderr.strip()}")
    return child.stdout


@click.command("demo")
@click.option("--thread", "thread_id", default=None, help="Thread id (default: a new one).")
@_home
@_hot_url
@_memory_embedder
@click.option(
    "--clean",
    is_flag=True,
    help=f"Erase what earlier demo runs left under --home (listed in {DEMO_RUNS}), then exit.",
)
def demo(
    thread_id: str | None, home: Path, hot_url: str | None, embedder: str, clean: bool
) -> None:
    """Run the Market Analyst story on the embedded default, narrating each tier.

    Run, pause for approval, approve from a new process, publish exactly once, show
    the checkpoint history and what was remembered, recall it in a second thread,
    then erase a second user from every tier. Uses the offline rule-based model (no LLM).
    Each run acts for a principal of its own (tenant demo-<run>), so it never reads or
    erases anyone else's threads, facts or documents; what it made stays for you to
    explore (the commands are printed at the end) until --clean erases it.

    Example: engram demo --home /tmp/engram-demo
    """
    where = Locations.embedded(home)
    if hot_url:
        where = dataclasses.replace(where, hot_url=hot_url)
    if clean and not (home / DEMO_RUNS).is_file():
        raise NotFoundError(f"no demo runs recorded in {home / DEMO_RUNS}")
    with Memory(where, embedder=embedder_or_none(embedder)) as memory:
        if clean:
            _demo_clean(memory, home)
            return
        run = uuid.uuid4().hex[:8]
        principal = Principal(f"{DEMO_TENANT}-{run}", DEMO_USER)
        thread_id = thread_id or f"demo-{run}"
        threads = (thread_id, f"{thread_id}-next", f"{thread_id}-visitor")
        _refuse_existing(memory, threads)
        _record_run(home, principal, threads)
        analyst = MarketAnalyst(home=home, hot_url=hot_url, memory=memory)
        _demo_first_thread(analyst, memory, home, hot_url, principal, thread_id, embedder)
        _demo_second_thread(analyst, memory, principal, threads[1])
        _demo_erasure(analyst, memory, Principal(principal.tenant_id, VISITOR), threads[2])
        _kept(analyst, memory, principal)
    _next_steps(home, hot_url, principal, thread_id, embedder)


def _refuse_existing(memory: Memory, thread_ids: tuple[str, ...]) -> None:
    for thread_id in thread_ids:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        if memory.checkpointer.get_tuple(config) is not None:
            raise ConflictError(f"thread {thread_id!r} already exists; pick another --thread")


def _record_run(home: Path, principal: Principal, threads: tuple[str, ...]) -> None:
    """Note the run's principals in the home before creating anything, for --clean."""
    entry = {"tenant": principal.tenant_id, "users": [DEMO_USER, VISITOR], "threads": threads}
    with private_file(home / DEMO_RUNS).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def _demo_clean(memory: Memory, home: Path) -> None:
    """Erase every principal and shared document that earlier demo runs recorded."""
    path = home / DEMO_RUNS
    runs = path.read_text(encoding="utf-8").splitlines()
    for line in runs:
        entry = json.loads(line)
        erased = [memory.forget(Principal(entry["tenant"], user)) for user in entry["users"]]
        owner = Principal(entry["tenant"], DEMO_USER)
        if memory.documents.exists(owner, CONVENTIONS_PATH):
            memory.documents.delete(owner, CONVENTIONS_PATH)
        facts = sum(r.facts.keys for r in erased)
        docs = sum(len(r.documents) for r in erased)
        click.echo(
            f"erased demo run {entry['tenant']}: {facts} facts, {docs} documents, "
            f"{sum(len(r.threads) for r in erased)} threads"
        )
    path.unlink(missing_ok=True)
    click.echo(f"{len(runs)} demo run(s) erased from {home}")


def _demo_first_thread(
    analyst: MarketAnalyst,
    memory: Memory,
    home: Path,
    hot_url: str | None,
    principal: Principal,
    thread_id: str,
    embedder: str,
) -> None:
    where = memory.where
    _say(
        "engram demo: the Market Analyst (offline rule-based model, no LLM)",
        f"principal {principal.tenant_id}/{principal.user_id}, thread {thread_id}\n"
        f"hot tier:  {analyst.hot_url} (LangGraph checkpoints, durability={DURABILITY!r})\n"
        f"cold tier: {where.cold_url} (long-term facts, versions, FTS + vectors)\n"
        f"documents: {where.documents} (Markdown files, index {where.index_path})\n"
        f"outbox:    {_outbox(analyst)} (publications keyed by idempotency key)",
    )
    conventions = "# Briefs\n\n" + "".join(f"- {c}\n" for c in DEMO_CONVENTIONS)
    memory.documents.write(principal, CONVENTIONS_PATH, conventions)
    _say(
        "1. Documents tier: the project's conventions, read by the planner",
        f"{CONVENTIONS_PATH}:\n{_indent(conventions)}",
    )
    _say(f"2. Run: {DEMO_REQUEST!r} (memory recalled first; working memory: the messages)")
    status = analyst.run(principal, DEMO_REQUEST, thread_id=thread_id, on_event=_echo_event)
    _narrate_pause(status)
    _say(f"3. A new process (pid != {os.getpid()}) approves the exact draft and publishes")
    click.echo(_indent(_approve_in_new_process(home, hot_url, principal, status, embedder)))
    _narrate_publication(analyst, principal, thread_id)
    _say("5. Checkpoint history of the thread (hot tier)")
    print_history(analyst.history(principal, thread_id))
    _narrate_size(analyst.hot_url, principal, thread_id)
    _say("6. Cold tier: facts remembered after publish, with their provenance")
    for fact in memory.facts(principal, include_history=False):
        prov = fact.provenance
        click.echo(
            f"  - {fact.text}\n    (thread {prov.thread_id}, checkpoint {prov.checkpoint_id})"
        )
    filed = memory.documents.list(principal, f"users/{principal.user_id}/research/**")
    click.echo(f"  documents tier: {', '.join(i.path for i in filed)}")


def _demo_second_thread(
    analyst: MarketAnalyst, memory: Memory, principal: Principal, thread_id: str
) -> None:
    _say(f"7. A second thread {thread_id}: {DEMO_FOLLOW_UP!r}")
    status = analyst.run(principal, DEMO_FOLLOW_UP, thread_id=thread_id, on_event=_echo_event)
    click.echo("  plan:")
    click.echo(_indent("\n".join(status.plan)))
    block = memory.recall(principal, DEMO_FOLLOW_UP, 600, include_profile=True)
    click.echo(f"  context block recalled for it ({block.tokens_used} of 600 tokens):")
    click.echo(_indent(block.text))


def _demo_erasure(
    analyst: MarketAnalyst, memory: Memory, visitor: Principal, thread_id: str
) -> None:
    _say(
        f"8. Erasure: a second user, {visitor.tenant_id}/{visitor.user_id}, leaves a fact and "
        "a thread, then is forgotten in every tier and the outbox (engram forget)"
    )
    memory.remember(visitor, DEMO_VISITOR_FACT, slot="risk", tags=("preference",))
    analyst.run(visitor, DEMO_FOLLOW_UP, thread_id=thread_id)
    report = memory.forget(visitor)
    click.echo(_indent(json.dumps(report.to_json(), indent=1)))
    left = memory.export(visitor)
    published = analyst.publications(visitor)
    click.echo(
        f"  export afterwards: {len(left['facts'])} facts, {len(left['documents'])} documents, "
        f"{len(left['threads'])} threads; outbox: {len(published)} publications"
    )


def _kept(analyst: MarketAnalyst, memory: Memory, principal: Principal) -> None:
    kept = memory.export(principal)
    click.echo(
        f"  {principal.tenant_id}/{principal.user_id} keeps {len(kept['facts'])} facts, "
        f"{len(kept['documents'])} documents, {len(kept['threads'])} threads, "
        f"{len(analyst.publications(principal))} publications"
    )


def _next_steps(
    home: Path, hot_url: str | None, principal: Principal, thread_id: str, embedder: str
) -> None:
    where = ["--home", str(home), *(["--hot-url", hot_url] if hot_url else [])]
    who = ["--tenant", principal.tenant_id, "--user", principal.user_id]
    url = hot_url or default_url("hot", home)
    steps = [
        ["agent", "status", thread_id, "--draft", *where, *who],
        ["agent", "history", thread_id, *where, *who],
        ["agent", "publications", *where, *who],
        ["threads", "history", thread_id, "--url", url, *who],
        [
            "recall",
            DEMO_FOLLOW_UP,
            "--profile",
            "all",
            "--home",
            str(home),
            "--embedder",
            embedder,
            *who,
        ],
        ["export", "--home", str(home), *who],
        ["demo", "--clean", *where],
    ]
    _say(f"Next steps: the demo's state stays under {home}; explore it with")
    for step in steps:
        click.echo("  engram " + " ".join(shlex.quote(part) for part in step))


def _narrate_size(hot_url: str, principal: Principal, thread_id: str) -> None:
    with open_checkpointer(hot_url) as saver:
        (size,) = Threads(saver).sizes([thread_id], principal)
    click.echo(
        f"  {size.checkpoints} checkpoints, {size.writes} pending writes, {size.blobs} blobs: "
        f"{size.total_bytes:,} bytes (prune with: engram threads prune)"
    )


def _narrate_pause(status: ThreadStatus) -> None:
    review = status.review or {}
    _say(
        "   Paused before `publish` (interrupt_before): a human must approve this exact draft",
        f"stage: {status.stage}; reviewer (no run history): {review.get('verdict')} "
        f"score {review.get('score')}; draft hash {str(status.draft_hash)[:12]}",
    )
    click.echo(_indent(status.draft or ""))


def _narrate_publication(analyst: MarketAnalyst, principal: Principal, thread_id: str) -> None:
    status = analyst.status(principal, thread_id)
    rows = [r for r in analyst.publications(principal) if r.thread_id == thread_id]
    _say(
        "4. Published exactly once",
        f"this process now reads stage {status.stage!r}; outbox rows for the thread: {len(rows)}",
    )
    again = analyst.resume(principal, thread_id)
    assert status.draft is not None
    rerun = analyst.ledger.publish(principal, thread_id, status.draft, "demo-rerun")
    rows = [r for r in analyst.publications(principal) if r.thread_id == thread_id]
    click.echo(
        f"resume again -> stage {again.stage!r}; re-running the publish write -> "
        f"created={rerun.created} (same key {rerun.idempotency_key[:12]}); outbox rows: {len(rows)}"
    )


def register(main: click.Group) -> None:
    """Add ``engram demo`` to the CLI."""
    main.add_command(demo)
