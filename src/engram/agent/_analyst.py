"""The Market Analyst's Python API: run, resume, approve, status, history, publications.

Each call opens the hot tier from its URL, compiles the graph with that
checkpointer and acts on one thread for one principal. Thread ids locate
checkpoints but authorise nothing: a thread whose state belongs to another
principal is reported as not found.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Durability, StateSnapshot

from engram import _validate as check
from engram._principal import Principal, validate_id
from engram.agent import _faults as faults
from engram.agent._data import MarketData, load_market_data
from engram.agent._graph import AnalystNodes, approves, compile_graph, tool_turns
from engram.agent._knowledge import file_research, planning_context, remember_conversation
from engram.agent._offline import OfflineAnalystModel
from engram.agent._state import AnalystState, Approval
from engram.agent._tools import make_tools
from engram.backends.sqlite.outbox import PublicationLedger
from engram.config import DEFAULT_HOME, default_outbox_path, default_url, parse_url
from engram.errors import (
    ConfigError,
    ConflictError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
)
from engram.memory import Memory
from engram.stores.hot import open_checkpointer
from engram.stores.hot.contract import in_use
from engram.stores.hot.outbox import Outbox, PublishedReport

DURABILITY: Durability = "sync"
"""Every step's checkpoint is written before the next step starts (see the README)."""

RECURSION_LIMIT = 100
OFFLINE = "offline"

Stage = Literal["interrupted", "awaiting_approval", "approved", "published", "out_of_scope", "done"]


@dataclass(frozen=True, slots=True)
class StepEvent:
    """One finished graph step, for narration (``node`` and a one-line ``summary``)."""

    node: str
    summary: str


EventSink = Callable[[StepEvent], None]


@dataclass(frozen=True, slots=True)
class ThreadStatus:
    """Where a Market Analyst thread stands."""

    thread_id: str
    principal: Principal
    stage: Stage
    next_nodes: tuple[str, ...]
    request: str
    tickers: tuple[str, ...]
    plan: tuple[str, ...]
    tool_calls: int
    draft: str | None
    draft_hash: str | None
    review: dict[str, Any] | None
    approval: dict[str, Any] | None
    publication: dict[str, Any] | None
    checkpoint_id: str | None
    uses_memory: bool = False
    """The thread was started with a memory layer (see :class:`MarketAnalyst`)."""
    memory_pending: bool = False
    """Published, but the brief is not filed nor the facts remembered yet (a crash came
    between): ``resume`` (or ``approve`` again) finishes that step."""


@dataclass(frozen=True, slots=True)
class CheckpointInfo:
    """One checkpoint of a thread's history, oldest first."""

    checkpoint_id: str
    step: int
    source: str
    ran: tuple[str, ...]
    next_nodes: tuple[str, ...]
    created_at: str | None


def resolve_model(spec: str | BaseChatModel) -> BaseChatModel:
    """``"offline"`` (the rule-based default, no LLM) or any ``"provider:model"``."""
    if isinstance(spec, BaseChatModel):
        return spec
    if spec == OFFLINE:
        return OfflineAnalystModel()
    if ":" not in spec:
        raise ConfigError(f"model must be 'offline' or 'provider:model', got {spec!r}")
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec)
    except ImportError as exc:
        raise MissingDependencyError(f"model {spec!r} needs its LangChain package: {exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"cannot load model {spec!r}: {exc}") from exc


def _plain(value: Any) -> dict[str, Any] | None:
    return dict(value) if value else None


def stage_of(snapshot: StateSnapshot) -> Stage:
    """Derive a thread's stage from its latest checkpoint.

    ``snapshot.next`` lists only the step's tasks that still have to run: when every
    task of the step has finished (its writes are saved as pending writes of the
    checkpoint, as after a crash before the next checkpoint, or in a thread forked
    from an earlier checkpoint) it is empty although the graph has not ended. The
    step's ``tasks`` tell the two apart: a finished graph has none left.
    """
    values = cast(AnalystState, snapshot.values)
    if values.get("publication"):
        return "published"
    if snapshot.next == ("publish",):
        thread_id = str(snapshot.config["configurable"]["thread_id"])
        approved = approves(values.get("approval"), values.get("draft_hash"), thread_id)
        return "approved" if approved else "awaiting_approval"
    if snapshot.next or snapshot.tasks:
        return "interrupted"
    return "out_of_scope" if values.get("route") == "out_of_scope" else "done"


def to_status(thread_id: str, snapshot: StateSnapshot) -> ThreadStatus:
    """A :class:`ThreadStatus` from a state snapshot."""
    v, stage = cast(AnalystState, snapshot.values), stage_of(snapshot)
    return ThreadStatus(
        thread_id=thread_id,
        principal=Principal(v["tenant_id"], v["user_id"]),
        stage=stage,
        next_nodes=tuple(snapshot.next),
        request=v["request"],
        tickers=tuple(v.get("tickers", [])),
        plan=tuple(v.get("plan", [])),
        tool_calls=tool_turns(v.get("messages", [])),
        draft=v.get("draft"),
        draft_hash=v.get("draft_hash"),
        review=_plain(v.get("review")),
        approval=_plain(v.get("approval")),
        publication=_plain(v.get("publication")),
        checkpoint_id=snapshot.config["configurable"].get("checkpoint_id"),
        uses_memory=bool(v.get("uses_memory", False)),
        memory_pending=_memory_pending(v, stage),
    )


def _memory_pending(values: AnalystState, stage: Stage) -> bool:
    """Published with memory, and the step after it not recorded as done."""
    filed = values.get("memory_filed")
    return stage == "published" and bool(values.get("uses_memory")) and not filed


def describe(node: str, update: dict[str, Any] | None) -> str:
    """A one-line account of what a node just did."""
    u = update or {}
    if node == "router":
        return f"route={u.get('route')} tickers={', '.join(u.get('tickers', [])) or '-'}"
    if node == "planner":
        return f"plan of {len(u.get('plan', []))} steps"
    if node in ("executor", "tools"):
        return "; ".join(_describe_message(m) for m in u.get("messages", []))
    if node == "reporter":
        lines = len(u.get("draft", "").splitlines())
        return f"draft of {lines} lines, hash {u.get('draft_hash', '')[:12]}"
    if node == "reviewer":
        review = u.get("review", {})
        return f"verdict={review.get('verdict')} score={review.get('score')}"
    if node == "publish":
        return (
            f"published, idempotency key {u.get('publication', {}).get('idempotency_key', '')[:12]}"
        )
    return node


def _describe_message(message: Any) -> str:
    calls = getattr(message, "tool_calls", None)
    if calls:
        return ", ".join(f"call {c['name']}({_args(c['args'])})" for c in calls)
    if getattr(message, "type", "") == "tool":
        return f"result of {message.tool_call_id}: {len(str(message.content))} chars"
    return f"says: {str(message.content)[:80]}"


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def home_outbox(home: Path) -> PublicationLedger | None:
    """The publication outbox under an embedded ``home``, if one was made there: the
    agent's erasure participant, found by ``Memory.forget`` through the
    ``engram.home_participants`` entry point."""
    path = default_outbox_path(home)
    return PublicationLedger(path) if path.exists() else None


def url_outbox(hot_url: str) -> Outbox | None:
    """The publication outbox beside a PostgreSQL hot tier (its ``engram_publications``
    table), found by ``Memory.forget`` through the ``engram.url_participants`` entry
    point; ``None`` for any other hot tier."""
    if parse_url(hot_url).scheme != "postgresql":
        return None
    from engram.backends.postgres.outbox import PostgresPublicationLedger

    return PostgresPublicationLedger(hot_url)


def default_outbox(home: str | Path, hot_url: str) -> Outbox:
    """Where an agent publishes: beside a PostgreSQL hot tier, else ``<home>/outbox.db``."""
    return url_outbox(hot_url) or PublicationLedger(default_outbox_path(home))


def analyst_over(memory: Memory) -> MarketAnalyst | None:
    """The agent over an open ``memory``'s own hot tier, with the outbox beside it (the
    home's ``outbox.db``, or the table beside PostgreSQL checkpoints); ``None`` when the
    memory has neither (a Redis hot tier without a home)."""
    where = memory.opened_at
    if where.home is None and url_outbox(where.hot_url) is None:
        return None
    home = where.home if where.home is not None else DEFAULT_HOME  # unused beside PostgreSQL
    return MarketAnalyst(home=home, hot_url=where.hot_url, memory=memory)


class MarketAnalyst:
    """The reference agent over engram's hot tier and a publication outbox.

    ``home`` holds the embedded defaults (``checkpoints.db`` and ``outbox.db``);
    ``hot_url`` overrides the checkpoint store (``postgresql://...``, ``memory://``; on
    PostgreSQL the outbox is the hot tier's ``engram_publications`` table);
    ``model`` is ``"offline"`` (deterministic rules, no LLM) or ``"provider:model"``.
    With an open ``memory`` (:class:`engram.memory.Memory`), the planner gets the
    user's recalled facts and the project's conventions, and after publish the brief
    is filed under the user's ``users/<user>/research/`` and the user's stated facts are
    remembered. A thread records whether it was started with memory: one that was is
    only resumed or approved with memory (:class:`ConfigError` otherwise), one that was
    not files nothing.
    Constructing it touches nothing; each call opens what it needs.
    """

    def __init__(
        self,
        *,
        home: str | Path = DEFAULT_HOME,
        hot_url: str | None = None,
        model: str | BaseChatModel = OFFLINE,
        ledger: Outbox | None = None,
        data: MarketData | None = None,
        memory: Memory | None = None,
    ) -> None:
        self.memory = memory
        self.hot_url = hot_url or default_url("hot", home)
        self.ledger = ledger or default_outbox(home, self.hot_url)
        if memory is not None:
            memory.add_participant(self.ledger)  # forget() erases what was published
        self._model = model
        self._data = data

    @contextmanager
    def _graph(self) -> Iterator[CompiledStateGraph[AnalystState]]:
        data = self._data or load_market_data()
        nodes = AnalystNodes(resolve_model(self._model), make_tools(data), data, self.ledger)
        with open_checkpointer(self.hot_url) as saver:
            yield compile_graph(nodes, saver)

    @staticmethod
    def _config(principal: Principal, thread_id: str) -> RunnableConfig:
        validate_id("thread_id", thread_id)
        return {
            "configurable": {"thread_id": thread_id},
            "metadata": {"tenant_id": principal.tenant_id, "user_id": principal.user_id},
            "recursion_limit": RECURSION_LIMIT,
        }

    @staticmethod
    def _owned(
        graph: CompiledStateGraph[AnalystState], principal: Principal, config: RunnableConfig
    ) -> StateSnapshot:
        snapshot = graph.get_state(config)
        values = snapshot.values
        if not values or (values.get("tenant_id"), values.get("user_id")) != principal.namespace:
            thread_id = config["configurable"]["thread_id"]
            raise NotFoundError(f"no Market Analyst thread {thread_id!r} for this principal")
        return snapshot

    @staticmethod
    def _stream(
        graph: CompiledStateGraph[AnalystState],
        payload: AnalystState | None,
        config: RunnableConfig,
        on_event: EventSink | None,
    ) -> None:
        for chunk in graph.stream(payload, config, stream_mode="updates", durability=DURABILITY):
            for node, update in chunk.items():
                if on_event is not None and not node.startswith("__"):
                    on_event(StepEvent(node, describe(node, update)))

    def run(
        self,
        principal: Principal,
        request: str,
        *,
        thread_id: str | None = None,
        user_facts: Sequence[str] = (),
        conventions: Sequence[str] = (),
        on_event: EventSink | None = None,
    ) -> ThreadStatus:
        """Start a new thread on ``request``; it stops before publishing, awaiting approval."""
        if not isinstance(request, str) or not request.strip():
            raise InvalidInputError("request must be a non-empty string")
        check.text("request", request)
        thread_id = thread_id or f"analysis-{uuid.uuid4().hex[:12]}"
        config = self._config(principal, thread_id)
        user_facts, conventions = self._recall(
            principal, request, user_facts, conventions, on_event
        )
        payload: AnalystState = {
            "request": request.strip(),
            "tenant_id": principal.tenant_id,
            "user_id": principal.user_id,
            "user_facts": list(user_facts),
            "conventions": list(conventions),
            "uses_memory": self.memory is not None,
        }
        with self._graph() as graph:
            if graph.get_state(config).values:  # the same answer whoever holds the id
                raise in_use(thread_id)
            self._stream(graph, payload, config, on_event)
            return to_status(thread_id, self._owned(graph, principal, config))

    def resume(
        self, principal: Principal, thread_id: str, *, on_event: EventSink | None = None
    ) -> ThreadStatus:
        """Continue an interrupted thread from its last checkpoint (never past an approval)."""
        config = self._config(principal, thread_id)
        with self._graph() as graph:
            snapshot = self._owned(graph, principal, config)
            self._check_memory(to_status(thread_id, snapshot))
            if stage_of(snapshot) in ("interrupted", "approved"):
                self._stream(graph, None, config, on_event)
                snapshot = graph.get_state(config)
            return self._after_publish(graph, principal, config, snapshot, on_event)

    def approve(
        self,
        principal: Principal,
        thread_id: str,
        *,
        draft_hash: str | None = None,
        approver: str | None = None,
        on_event: EventSink | None = None,
    ) -> ThreadStatus:
        """Approve the paused draft (optionally pinned by its hash or a prefix) and publish it."""
        config = self._config(principal, thread_id)
        with self._graph() as graph:
            snapshot = self._owned(graph, principal, config)
            found = to_status(thread_id, snapshot)
            self._check_memory(found)
            stage = found.stage
            if approver is not None:
                check.text("approver", approver, line=True)
            if found.memory_pending:
                return self._after_publish(graph, principal, config, snapshot, on_event)
            if stage not in ("awaiting_approval", "approved"):
                raise ConflictError(
                    f"thread {thread_id!r} is not awaiting approval (stage: {stage})"
                )
            current = str(snapshot.values["draft_hash"])
            if draft_hash is not None and (
                len(draft_hash) < 8 or not current.startswith(draft_hash)
            ):
                raise ConflictError(
                    f"the draft is {current[:12]}, not the {draft_hash!r} you reviewed"
                )
            if stage == "awaiting_approval":
                approval = Approval(
                    approved_by=approver or principal.user_id,
                    draft_hash=current,
                    approved_at=datetime.now(UTC).isoformat(timespec="seconds"),
                    thread_id=thread_id,
                )
                graph.update_state(config, {"approval": approval})
            self._stream(graph, None, config, on_event)
            return self._after_publish(graph, principal, config, graph.get_state(config), on_event)

    def _recall(
        self,
        principal: Principal,
        request: str,
        user_facts: Sequence[str],
        conventions: Sequence[str],
        on_event: EventSink | None,
    ) -> tuple[list[str], list[str]]:
        """The planner's context: given facts and conventions plus what memory recalls."""
        if self.memory is None:
            return list(user_facts), list(conventions)
        found = planning_context(self.memory, principal, request)
        if on_event is not None:
            on_event(
                StepEvent(
                    "memory",
                    f"recalled {len(found.facts)} user facts and {len(found.conventions)} "
                    f"conventions for the planner ({found.block.tokens_used} tokens)",
                )
            )
        return [*user_facts, *found.facts], [*conventions, *found.conventions]

    def _check_memory(self, status: ThreadStatus) -> None:
        """A thread started with memory is only continued with memory (or its brief would
        silently never be filed)."""
        if status.uses_memory and self.memory is None:
            raise ConfigError(
                f"thread {status.thread_id!r} was started with memory: continue it with a "
                "memory layer (MarketAnalyst(memory=...); on the command line, without --no-memory)"
            )

    def _after_publish(
        self,
        graph: CompiledStateGraph[Any],
        principal: Principal,
        config: RunnableConfig,
        snapshot: StateSnapshot,
        on_event: EventSink | None,
    ) -> ThreadStatus:
        """File the published brief and remember the user's stated facts (outside the loop),
        for a thread that was started with memory and has not done so yet; then record it
        in the thread. Both steps are idempotent (the same paths and text; a fact already
        stored is ignored), so a crash before the record is finished by running them again."""
        status = to_status(str(config["configurable"]["thread_id"]), snapshot)
        if self.memory is None or not status.memory_pending or status.draft is None:
            return status
        self._file(self.memory, principal, status, status.draft, on_event)
        graph.update_state(config, {"memory_filed": True}, as_node="publish")
        return to_status(status.thread_id, graph.get_state(config))

    def _file(
        self,
        memory: Memory,
        principal: Principal,
        status: ThreadStatus,
        draft: str,
        on_event: EventSink | None,
    ) -> None:
        faults.hold_if("file")
        filed, held = file_research(memory, principal, status.tickers, draft, status.thread_id)
        model = None if self._model == OFFLINE else resolve_model(self._model)
        results = remember_conversation(
            memory,
            principal,
            status.request,
            tickers=status.tickers,
            thread_id=status.thread_id,
            checkpoint_id=status.checkpoint_id,
            model=model,
        )
        if on_event is not None:
            done = ", ".join(f"{r.action} {r.text or r.reason!s}" for r in results) or "none"
            briefs = f"filed {', '.join(filed) or 'nothing'}"
            if held:
                briefs += f"; held for review: {', '.join(held)}"
            on_event(StepEvent("memory", f"{briefs}; facts: {done}"))

    def status(self, principal: Principal, thread_id: str) -> ThreadStatus:
        """The thread's stage, draft, review, approval and publication."""
        config = self._config(principal, thread_id)
        with self._graph() as graph:
            return to_status(thread_id, self._owned(graph, principal, config))

    def history(self, principal: Principal, thread_id: str) -> list[CheckpointInfo]:
        """Every checkpoint of the thread, oldest first, with the nodes that produced it."""
        config = self._config(principal, thread_id)
        with self._graph() as graph:
            self._owned(graph, principal, config)
            snapshots = list(graph.get_state_history(config))[::-1]
        infos: list[CheckpointInfo] = []
        before: tuple[str, ...] = ()
        for snap in snapshots:
            meta = snap.metadata or {}
            infos.append(
                CheckpointInfo(
                    checkpoint_id=str(snap.config["configurable"]["checkpoint_id"]),
                    step=int(meta.get("step", -1)),
                    source=str(meta.get("source", "")),
                    ran=tuple(before) if meta.get("source") == "loop" else (),
                    next_nodes=tuple(snap.next),
                    created_at=snap.created_at,
                )
            )
            before = tuple(snap.next)
        return infos

    def publications(self, principal: Principal) -> list[PublishedReport]:
        """Every report published for ``principal`` (from the outbox)."""
        return self.ledger.publications(principal)
