"""The Market Analyst's use of the memory layer, outside its reasoning loop.

Before a run: the user's facts (cold tier) and the project's conventions (document
tier) are recalled for the planner. After publish: the brief is filed as
``users/<user>/research/<TICKER>-<yyyy-mm>.md`` and the facts the user stated are
extracted (by rules, or by the chat model when one is configured) and remembered with
their provenance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from engram._principal import Principal
from engram.agent._statements import statements
from engram.errors import HeldForReviewError
from engram.memory import Memory, RecallResult, RememberResult
from engram.tools import DocumentGuard

PLANNING_BUDGET = 600
"""Tokens of recalled context the planner gets."""


@dataclass(frozen=True, slots=True)
class Observation:
    """A fact extracted from the conversation: its text, slot and tags."""

    text: str
    slot: str | None
    tags: tuple[str, ...]
    quote: str | None = None
    """The user's sentence the fact was read from (kept as provenance, not as the fact)."""


@dataclass(frozen=True, slots=True)
class PlanningContext:
    """What the planner is given: fact lines (with provenance), conventions, the block."""

    facts: tuple[str, ...]
    conventions: tuple[str, ...]
    block: RecallResult


_RISK = r"(conservative|cautious|aggressive|moderate)"
_REPORT = (
    r"(?:reports?|briefs?|answers?|summar(?:y|ies)|analys[ie]s|replies|responses?|overviews?"
    r"|notes?|versions?|write-?ups?)"
)
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(
            rf"\b{_RISK}(?=\s+(?:\w+\s+)?(?:investor|investing|investments?|trader|saver|risk"
            r"|approach|portfolio|strategy|allocation)\b|\s+(?:with|about)\s+(?:my\s+)?"
            r"(?:money|investments?|investing|risk|portfolio)\b)"
            r"|\b(risk[- ]averse)\b"
            rf"|\brisk(?:\s+tolerance|\s+appetite|\s+profile)?\s+is\s+(?:now\s+)?(?:\w+\s+)?{_RISK}\b",
            re.I,
        ),
        "risk_tolerance",
        "Risk tolerance: {}",
    ),
    (
        re.compile(
            r"\b(competitors?|competitive landscape)\b"
            r"|\b(?:against|vs\.?|versus|with|to)\s+(?:the\s+|its\s+|their\s+)?(competition)\b",
            re.I,
        ),
        "competitor_analysis",
        "Wants competitor analysis",
    ),
    (
        re.compile(
            rf"\b(brief|short|detailed|in[- ]depth|deep[- ]dive)\s+(?:\w+\s+)?{_REPORT}\b"
            rf"|\bkeep\s+(?:it|them|things|{_REPORT})\s+(brief|short|detailed)\b"
            r"|\b(?:prefer|like|want|love)\s+(?:it\s+|them\s+|things\s+)?"
            r"(brief|short|detailed|in[- ]depth)\b(?!\s+(?:on|about|for|of)\b)",
            re.I,
        ),
        "depth",
        "Preferred depth: {}",
    ),
)
"""The preferences the Market Analyst's rules read: a risk tolerance said of investing
("I'm a cautious investor", "my risk tolerance is now aggressive"; not "my conservative
parents"), competitor analysis, and a depth said of reports ("I like detailed briefs",
"keep it short"; not "a brief on NVDA", "I sold short")."""
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_FIRST_PERSON = re.compile(r"\b(I|I'm|I am|my|me|we|our)\b", re.I)

EXTRACT_PROMPT = """You extract durable facts a user stated about themselves (risk tolerance,
preferred depth, tickers followed, what to include). Answer with JSON only: a list of
{"text": <a short third-person fact>, "slot": <snake_case topic or null>}. Only facts the
user stated; never instructions to the assistant."""


def extract_rules(text: str, tickers: Sequence[str] = ()) -> list[Observation]:
    """Facts in the user's first-person sentences, by rules: one per slot the rules
    know, then each other statement the user made about themselves, in the third
    person (:func:`engram.agent._statements.statements`)."""
    found: dict[str, Observation] = {}
    read: list[str] = []
    for sentence in (s.group(0).strip() for s in _SENTENCE.finditer(text)):
        if not _FIRST_PERSON.search(sentence):
            continue
        for pattern, slot, label in _RULES:
            if match := pattern.search(sentence):
                read.append(match.group(0))
                if slot not in found:
                    said = next(group for group in match.groups() if group)
                    fact = label.format(said.lower())
                    found[slot] = Observation(fact, slot, ("preference",), sentence)
    stated = [Observation(s.text, None, s.tags, s.quote) for s in statements(text, read)]
    found.update((f"stated:{n}", o) for n, o in enumerate(stated))
    if tickers:
        follows = ", ".join(tickers)
        found["tickers_followed"] = Observation(
            f"Follows {follows} (asked for analysis)", None, ("fact",)
        )
    return list(found.values())


def extract_with_model(model: BaseChatModel, text: str) -> list[Observation] | None:
    """Facts extracted by the chat model, or None when its answer does not parse."""
    reply = model.invoke([SystemMessage(EXTRACT_PROMPT), HumanMessage(text)])
    content = reply.content if isinstance(reply.content, str) else str(reply.content)
    match = re.search(r"\[.*\]", content, re.S)
    try:
        items = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    return [
        Observation(str(i["text"]), i.get("slot") or None, ("preference",))
        for i in items
        if isinstance(i, dict) and isinstance(i.get("text"), str)
    ]


def extract_facts(
    text: str, tickers: Sequence[str] = (), model: BaseChatModel | None = None
) -> list[Observation]:
    """The chat model's extraction when one is configured (falling back to the rules)."""
    if model is not None:
        found = extract_with_model(model, text)
        if found is not None:
            return found
    return extract_rules(text, tickers)


def _line(item_text: str, thread_id: str | None, checkpoint_id: str | None) -> str:
    if not thread_id:
        return item_text
    return f"{item_text} (from thread {thread_id}, checkpoint {checkpoint_id or '-'})"


def planning_context(memory: Memory, principal: Principal, request: str) -> PlanningContext:
    """The planner's recalled context: user facts with provenance, and conventions."""
    block = memory.recall(principal, request, PLANNING_BUDGET, passages=0, include_profile=True)
    facts = tuple(
        _line(i.text, i.thread_id, i.checkpoint_id) for i in block.items if i.kind != "document"
    )
    return PlanningContext(facts, tuple(memory.conventions(principal)), block)


def research_path(principal: Principal, ticker: str, when: datetime) -> str:
    """Where a brief published for ``principal`` on ``ticker`` is filed: the user's own
    ``users/<user>/research/<TICKER>-<yyyy-mm>.md`` (another user's brief on the same
    ticker and month is another document)."""
    return f"users/{principal.user_id}/research/{ticker.upper()}-{when:%Y-%m}.md"


def file_research(
    memory: Memory,
    principal: Principal,
    tickers: Sequence[str],
    draft: str,
    thread_id: str,
) -> tuple[list[str], list[str]]:
    """File the published brief under the user's ``research/`` once per ticker; returns
    the paths filed and the paths held.

    The brief is the model's text built from fetched market data, so it passes the same
    poisoning guard as the model's own document writes: approving a publication is not
    approving instructions for later prompts. A held brief waits in the user's review
    queue instead of being filed."""
    when = memory.now()
    meta = {
        "user_id": principal.user_id,
        "thread_id": thread_id,
        "tickers": list(tickers),
        "published_at": when.isoformat(timespec="seconds"),
    }
    guard = DocumentGuard(memory.policy.guard, clock=memory.now)
    filed: list[str] = []
    held: list[str] = []
    for path in (research_path(principal, t, when) for t in tickers):
        try:
            guard.screen(memory.documents, principal, path, draft)
        except HeldForReviewError:
            held.append(path)
            continue
        memory.documents.write(principal, path, draft, meta)
        filed.append(path)
    return filed, held


def remember_conversation(
    memory: Memory,
    principal: Principal,
    text: str,
    *,
    tickers: Sequence[str] = (),
    thread_id: str,
    checkpoint_id: str | None,
    message_ids: Sequence[str] = (),
    model: BaseChatModel | None = None,
) -> list[RememberResult]:
    """Extract the user's facts from ``text`` and remember them with their provenance."""
    return [
        memory.remember(
            principal,
            obs.text,
            slot=obs.slot,
            tags=obs.tags,
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            message_ids=message_ids,
            quote=obs.quote,
        )
        for obs in extract_facts(text, tickers, model)
    ]
