"""Compaction and the model's input: what enters the next model call.

:class:`WorkingMemory` is the whole policy in one object, usable two ways:

- in a custom LangGraph graph: ``update(state)`` (a node: pins + compaction when due) and
  ``model_input(state)`` (the messages to send: system + pinned block + cleared + trimmed);
- inside ``create_agent`` through :class:`engram.context.WorkingMemoryMiddleware`.

Compaction replaces the older part of the history by one summary message and keeps the most
recent units verbatim; the pins (constraints, approvals, effects, sources) are extracted first and
live in their own state fields, so the summary never has to carry them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engram.context._checks import check_count, check_messages, check_names
from engram.context._pins import (
    DEFAULT_RULES,
    SUMMARY_FLAG,
    PinFields,
    PinRules,
    extract_pins,
    merge_pins,
    new_pins,
    normalise_key,
    pins_of,
    render_pins,
)
from engram.context._summary import Summary, asummarise, summarise
from engram.context._trim import clear_tool_results, compaction_cut, split_system, trim_to_budget
from engram.errors import InvalidInputError
from engram.tokens import TokenCounter, count_message_tokens, message_tokens


@dataclass(frozen=True)
class ContextPolicy:
    """Token budgets and thresholds of working memory."""

    max_input_tokens: int = 8000  # hard budget of one model call (system + pins + history)
    compact_at_tokens: int | None = 6000  # history size that triggers compaction (None: never)
    keep_recent_tokens: int = 2000  # recent history kept verbatim by a compaction
    summary_tokens: int = 400  # length asked of a summary
    summary_input_tokens: int = 12000  # most of the history shown to the summariser at once
    clear_keep_last: int = 3  # most recent tool results never cleared
    clear_min_tokens: int = 200  # smaller tool results are never cleared
    clear_exclude_tools: tuple[str, ...] = ()
    start_on_human: bool = True  # a trimmed history starts at a user turn when it can
    render_pins: bool = True  # False only to demonstrate what pins protect against

    def __post_init__(self) -> None:
        for name in ("max_input_tokens", "summary_tokens", "summary_input_tokens"):
            check_count(name, getattr(self, name), minimum=1)
        for name in ("keep_recent_tokens", "clear_keep_last", "clear_min_tokens"):
            check_count(name, getattr(self, name))
        check_names("clear_exclude_tools", self.clear_exclude_tools)
        trigger = self.compact_at_tokens
        if (
            trigger is not None
            and check_count("compact_at_tokens", trigger) <= self.keep_recent_tokens
        ):
            raise InvalidInputError("compact_at_tokens must exceed keep_recent_tokens")


@dataclass(frozen=True)
class Compaction:
    """The result of one compaction: the new history and what was summarised."""

    summary: Summary
    removed: list[BaseMessage]
    messages: list[BaseMessage]
    pins: PinFields = field(default_factory=dict)

    def state_update(self) -> dict[str, Any]:
        """A LangGraph update replacing the history (``add_messages``) and adding the pins."""
        update: dict[str, Any] = dict(self.pins)
        update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *self.messages]
        update["summary"] = self.summary.text
        return update


def pinned_texts(pins: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(normalise_key(p["text"]) for f in pins.values() for p in f or [])


def _messages(state: Mapping[str, Any]) -> list[BaseMessage]:
    if not isinstance(state, Mapping):
        raise InvalidInputError(f"state must be a mapping, got {type(state).__name__}")
    return check_messages(state.get("messages") or [], "state['messages']")


def summary_message(summary: Summary) -> HumanMessage:
    return HumanMessage(
        content=f"Summary of the earlier conversation ({summary.method}):\n{summary.text}",
        additional_kwargs={SUMMARY_FLAG: True},
        id=f"engram-summary-{uuid.uuid4().hex}",
    )


@dataclass(frozen=True)
class WorkingMemory:
    """Trim, clear, summarise and compact a history under a :class:`ContextPolicy`."""

    policy: ContextPolicy = field(default_factory=ContextPolicy)
    model: BaseChatModel | None = None  # summariser; None: extractive summaries
    rules: PinRules = DEFAULT_RULES
    counter: TokenCounter | None = None
    fallback_on: tuple[type[BaseException], ...] = (Exception,)

    def pins(self, state: Mapping[str, Any]) -> tuple[PinFields, PinFields]:
        """(all pins, pins that are new to ``state``) after reading its messages."""
        current = pins_of(state)
        fresh = new_pins(current, extract_pins(_messages(state), self.rules))
        merged = {k: merge_pins(current.get(k), fresh.get(k)) for k in current}
        return merged, fresh

    def due(self, messages: Sequence[BaseMessage]) -> bool:
        limit = self.policy.compact_at_tokens
        return limit is not None and count_message_tokens(messages, self.counter) >= limit

    def _plan(
        self, messages: Sequence[BaseMessage], force: bool
    ) -> tuple[SystemMessage | None, list[BaseMessage], list[BaseMessage]] | None:
        if not (force or self.due(messages)):
            return None
        system, rest = split_system(messages)
        cut = compaction_cut(rest, self.policy.keep_recent_tokens, self.counter)
        return (system, rest[:cut], rest[cut:]) if cut > 0 else None

    def _finish(
        self,
        plan: tuple[SystemMessage | None, list[BaseMessage], list[BaseMessage]],
        summary: Summary,
        fresh: PinFields,
    ) -> Compaction:
        system, older, kept = plan
        head = [system] if system is not None else []
        new = [*head, summary_message(summary), *kept]
        return Compaction(summary=summary, removed=older, messages=new, pins=fresh)

    def _summary_args(self, pins: PinFields) -> dict[str, Any]:
        return {
            "max_tokens": self.policy.summary_tokens,
            "counter": self.counter,
            "fallback_on": self.fallback_on,
            "omit": pinned_texts(pins),
            "max_input_tokens": self.policy.summary_input_tokens,
        }

    def compact(self, state: Mapping[str, Any], *, force: bool = False) -> Compaction | None:
        """Compact ``state["messages"]`` when due (or ``force``); None when nothing to do."""
        pins, fresh = self.pins(state)
        plan = self._plan(_messages(state), force)
        if plan is None:
            return None
        summary = summarise(plan[1], self.model, **self._summary_args(pins))
        return self._finish(plan, summary, fresh)

    async def acompact(self, state: Mapping[str, Any], *, force: bool = False) -> Compaction | None:
        """Async twin of :meth:`compact` (only the summary call differs)."""
        pins, fresh = self.pins(state)
        plan = self._plan(_messages(state), force)
        if plan is None:
            return None
        summary = await asummarise(plan[1], self.model, **self._summary_args(pins))
        return self._finish(plan, summary, fresh)

    def update(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """A LangGraph node: new pins, plus a compaction when the history is over the trigger."""
        compaction = self.compact(state)
        return compaction.state_update() if compaction else dict(self.pins(state)[1])

    async def aupdate(self, state: Mapping[str, Any]) -> dict[str, Any]:
        compaction = await self.acompact(state)
        return compaction.state_update() if compaction else dict(self.pins(state)[1])

    def system_with_pins(
        self, system: SystemMessage | None, pins: Mapping[str, Any]
    ) -> SystemMessage | None:
        """``system`` with the pinned block appended (or a new system message holding it)."""
        block = render_pins(pins) if self.policy.render_pins else ""
        if not block:
            return system
        text = f"{system.text}\n\n{block}" if system is not None and system.text else block
        return SystemMessage(content=text, id=system.id if system is not None else None)

    def shape(
        self, system: SystemMessage | None, history: Sequence[BaseMessage], pins: Mapping[str, Any]
    ) -> tuple[SystemMessage | None, list[BaseMessage]]:
        """The system message with the pinned block, and ``history`` fitted beside it."""
        full = self.system_with_pins(system, pins)
        self._check_room(system, full)
        return full, self.fit(full, history)

    def _check_room(self, system: SystemMessage | None, full: SystemMessage | None) -> None:
        """Refuse, naming the culprit, when the system prompt or the pins leave no room."""
        budget = self.policy.max_input_tokens
        own = message_tokens(system, self.counter) if system is not None else 0
        if own > budget:
            raise InvalidInputError(
                f"the system prompt ({own} tokens) is larger than max_input_tokens ({budget})"
            )
        pinned = (message_tokens(full, self.counter) if full is not None else 0) - own
        if own + pinned > budget:
            raise InvalidInputError(
                f"the pinned state ({pinned} tokens of constraints, approvals, effects and "
                f"sources) does not fit in max_input_tokens ({budget}) beside a system prompt "
                f"of {own} tokens; revoke pins (active=False) or raise max_input_tokens"
            )

    def fit(
        self, system: SystemMessage | None, history: Sequence[BaseMessage]
    ) -> list[BaseMessage]:
        """Clear old tool results, then trim ``history`` to the budget left after ``system``."""
        cleared = clear_tool_results(
            history,
            keep_last=self.policy.clear_keep_last,
            min_tokens=self.policy.clear_min_tokens,
            exclude_tools=self.policy.clear_exclude_tools,
            counter=self.counter,
        )
        reserved = message_tokens(system, self.counter) if system is not None else 0
        return trim_to_budget(
            cleared,
            self.policy.max_input_tokens,
            counter=self.counter,
            reserved_tokens=reserved,
            start_on_human=self.policy.start_on_human,
        )

    def model_input(self, state: Mapping[str, Any]) -> list[BaseMessage]:
        """The messages for the next model call: system + pinned block, then the fitted history."""
        pins, _ = self.pins(state)
        system, history = split_system(_messages(state))
        system, fitted = self.shape(system, history, pins)
        head: list[BaseMessage] = [system] if system is not None else []
        return head + fitted
