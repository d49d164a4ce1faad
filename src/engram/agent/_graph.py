"""The Market Analyst graph: router, planner, executor <-> tools, reporter, reviewer, publish.

``build_graph`` wires the nodes around a chat model, the tools and the outbox;
the caller compiles it with a checkpointer (``interrupt_before=["publish"]`` is
applied by :func:`compile_graph`) so a human approves the exact draft first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from engram._principal import Principal
from engram.agent import _faults as faults
from engram.agent import _prompts as prompts
from engram.agent._data import MarketData
from engram.agent._state import AnalystState, Approval, Publication, Review
from engram.errors import ConflictError, EngramError
from engram.stores.hot.outbox import Outbox, draft_hash

MAX_TOOL_STEPS = 16
"""The executor's ReAct loop stops after this many tool-calling turns."""

ALIASES = {"google": "GOOGL", "nvidia": "NVDA", "intel": "INTC", "apple": "AAPL"}


def _alias(word: str) -> str:
    return word.lower().rstrip(".,").removesuffix(".com")


def find_tickers(request: str, data: MarketData) -> list[str]:
    """Tickers named in ``request`` (symbols or first words of company names), in order."""
    names = {_alias(rec["name"].split()[0]): t for t, rec in data.fundamentals.items()}
    lookup = {**names, **ALIASES, **{t.lower(): t for t in data.tickers}}
    lookup.pop("advanced", None)
    words = [_alias(w) for w in re.findall(r"[A-Za-z][A-Za-z.]*[A-Za-z]|[A-Za-z]", request)]
    return list(dict.fromkeys(lookup[w] for w in words if w in lookup))


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def parse_review(text: str) -> Review:
    """The reviewer's JSON verdict; unparseable answers are kept as an ``unknown`` verdict."""
    match = re.search(r"\{.*\}", text, re.S)
    try:
        value = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict) or value.get("verdict") not in ("approve", "revise"):
        return Review(verdict="unknown", score=0.0, issues=[text.strip()[:500]])
    issues = [str(i) for i in value.get("issues", [])]
    return Review(verdict=value["verdict"], score=float(value.get("score", 0.0)), issues=issues)


def tool_turns(messages: Sequence[BaseMessage]) -> int:
    """How many executor turns asked for tools."""
    return sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)


def principal_of(state: AnalystState) -> Principal:
    """The principal a thread runs for (stored in its state at the first step)."""
    return Principal(state["tenant_id"], state["user_id"])


@dataclass(frozen=True, slots=True)
class AnalystNodes:
    """The graph's nodes, closed over the model, the tools and the outbox."""

    model: BaseChatModel
    tools: Sequence[BaseTool]
    data: MarketData
    ledger: Outbox

    def router(self, state: AnalystState) -> dict[str, Any]:
        tickers = find_tickers(state["request"], self.data)
        return {"route": "analyze" if tickers else "out_of_scope", "tickers": tickers}

    def planner(self, state: AnalystState) -> dict[str, Any]:
        human = prompts.planner_input(
            state["request"],
            state["tickers"],
            state.get("user_facts", []),
            state.get("conventions", []),
        )
        reply = self.model.invoke([SystemMessage(prompts.PLANNER), HumanMessage(human)])
        return {"plan": [line for line in _text(reply).splitlines() if line.strip()]}

    def executor(self, state: AnalystState) -> dict[str, Any]:
        system = SystemMessage(prompts.EXECUTOR.format(plan="\n".join(state["plan"])))
        history = [system, HumanMessage(state["request"]), *state.get("messages", [])]
        reply = self.model.bind_tools(list(self.tools)).invoke(history)
        return {"messages": [reply]}

    def run_tools(self, state: AnalystState) -> dict[str, Any]:
        messages = state["messages"]
        last = messages[-1]
        assert isinstance(last, AIMessage)
        done = sum(1 for m in messages if isinstance(m, ToolMessage))
        by_name = {t.name: t for t in self.tools}
        results = []
        for ordinal, call in enumerate(last.tool_calls, start=done + 1):
            faults.trace("start", call["id"] or "")
            faults.hold_if(f"tool:{ordinal}")
            results.append(_call_tool(by_name, call))
            faults.trace("end", call["id"] or "")
        return {"messages": results}

    def reporter(self, state: AnalystState) -> dict[str, Any]:
        results = prompts.tool_results(state["messages"])
        human = prompts.reporter_input(state["request"], state["tickers"], results)
        system = prompts.REPORTER.format(disclaimer=prompts.DISCLAIMER)
        draft = _text(self.model.invoke([SystemMessage(system), HumanMessage(human)]))
        return {"draft": draft, "draft_hash": draft_hash(draft)}

    def reviewer(self, state: AnalystState) -> dict[str, Any]:
        reply = self.model.invoke([SystemMessage(prompts.REVIEWER), HumanMessage(state["draft"])])
        return {"review": parse_review(_text(reply))}

    def publish(self, state: AnalystState, config: RunnableConfig) -> dict[str, Any]:
        approval = state.get("approval")
        digest = draft_hash(state["draft"])
        thread_id = str(config["configurable"]["thread_id"])
        if not approves(approval, digest, thread_id):
            raise ConflictError(
                "publishing needs a human approval of this exact draft on this thread"
            )
        receipt = self.ledger.publish(
            principal_of(state), thread_id, state["draft"], cast(Approval, approval)["approved_by"]
        )
        faults.hold_if("publish")
        return {
            "publication": Publication(
                idempotency_key=receipt.idempotency_key,
                published_at=receipt.published_at,
                draft_hash=receipt.draft_hash,
            )
        }


def approves(approval: Approval | None, digest: str | None, thread_id: str) -> bool:
    """Whether ``approval`` is a human's approval of the draft ``digest`` on ``thread_id``
    (an approval recorded before approvals named their thread counts on any)."""
    if not approval or digest is None or approval.get("draft_hash") != digest:
        return False
    return approval.get("thread_id", thread_id) == thread_id


def _call_tool(by_name: dict[str, BaseTool], call: Any) -> ToolMessage:
    tool = by_name.get(call["name"])
    if tool is None:
        return ToolMessage(
            f"error: no tool {call['name']!r}", tool_call_id=call["id"], status="error"
        )
    try:
        result = tool.invoke(call)
    except (EngramError, ValueError) as exc:
        return ToolMessage(f"error: {exc}", tool_call_id=call["id"], status="error")
    assert isinstance(result, ToolMessage)
    return result


def _after_router(state: AnalystState) -> Literal["planner", "__end__"]:
    return "planner" if state["route"] == "analyze" else "__end__"


def _after_executor(state: AnalystState) -> Literal["tools", "reporter"]:
    last = state["messages"][-1]
    wants_tools = isinstance(last, AIMessage) and bool(last.tool_calls)
    return (
        "tools" if wants_tools and tool_turns(state["messages"]) <= MAX_TOOL_STEPS else "reporter"
    )


def build_graph(nodes: AnalystNodes) -> StateGraph[AnalystState]:
    """The uncompiled graph."""
    builder = StateGraph(AnalystState)
    builder.add_node("router", nodes.router)
    builder.add_node("planner", nodes.planner)
    builder.add_node("executor", nodes.executor)
    builder.add_node("tools", nodes.run_tools)
    builder.add_node("reporter", nodes.reporter)
    builder.add_node("reviewer", nodes.reviewer)
    builder.add_node("publish", nodes.publish)
    builder.add_edge(START, "router")
    builder.add_conditional_edges("router", _after_router)
    builder.add_edge("planner", "executor")
    builder.add_conditional_edges("executor", _after_executor)
    builder.add_edge("tools", "executor")
    builder.add_edge("reporter", "reviewer")
    builder.add_edge("reviewer", "publish")
    builder.add_edge("publish", END)
    return builder


def compile_graph(
    nodes: AnalystNodes, checkpointer: BaseCheckpointSaver[str] | None
) -> CompiledStateGraph[AnalystState]:
    """Compile with ``interrupt_before=["publish"]``: nothing is published unapproved."""
    return build_graph(nodes).compile(checkpointer=checkpointer, interrupt_before=["publish"])
