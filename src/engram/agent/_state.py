"""The Market Analyst's graph state: plain typed dicts and LangChain messages only.

Everything in the state goes through the checkpointer's serialiser, so it holds
builtin types and messages (no custom classes). ``user_facts`` and ``conventions``
are the planner's recalled context: the caller passes them in, and with a memory
layer (``MarketAnalyst(memory=...)``) they are filled from the cold and documents tiers.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

Route = Literal["analyze", "out_of_scope"]


class Review(TypedDict):
    """The reviewer's assessment of the draft (it sees the draft only, no run history)."""

    verdict: Literal["approve", "revise", "unknown"]
    score: float
    issues: list[str]


class Approval(TypedDict, total=False):
    """A human's approval of one exact draft, identified by its hash, on one thread (a
    fork carries the approval in its state, and must ask again)."""

    approved_by: str
    draft_hash: str
    approved_at: str
    thread_id: str
    """The thread approved (absent in approvals given before it was recorded)."""


class Publication(TypedDict):
    """The outbox receipt of a published report."""

    idempotency_key: str
    published_at: str
    draft_hash: str


class AnalystState(TypedDict, total=False):
    """What a Market Analyst thread carries from node to node (and across processes)."""

    request: str
    tenant_id: str
    user_id: str
    user_facts: list[str]
    conventions: list[str]
    uses_memory: bool
    """Started with a memory layer: its approval files the brief and remembers facts."""
    route: Route
    tickers: list[str]
    plan: list[str]
    messages: Annotated[list[AnyMessage], add_messages]
    draft: str
    draft_hash: str
    review: Review
    approval: Approval
    publication: Publication
    memory_filed: bool
    """The published brief was filed and the user's facts remembered (the step after
    publishing, outside the graph: a crash before it is finished by the next
    ``resume`` or ``approve``)."""
