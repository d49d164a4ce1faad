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
        if self.max_input_tokens <= 0 or self.summary_tokens <= 0 or self.keep_recent_tokens < 0:
            raise InvalidInputError("token budgets must be positive")
        if self.compact_at_tokens is not None and self.compact_at_tokens <= self.keep_recent_tokens:
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
    messages = state.get("messages") or []
    if not isinstance(messages, list):
        raise InvalidInputError("state['messages'] must be a list of messages")
    return messages


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
        system = self.system_with_pins(system, pins)
        head: list[BaseMessage] = [system] if system is not None else []
        return head + self.fit(system, history)
