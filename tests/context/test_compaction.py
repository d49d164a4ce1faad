"""Compaction mid-run of a small LangGraph agent: constraints survive in the pinned block.

The agent's chat model is rule-based and reads only its input messages: it buys the top
momentum stock unless some input message says "never trade <TICKER>". The user states that
constraint in the first message; a large tool result forces a compaction that summarises
that message away. The next action must still skip TSLA, and the control run (pins not
rendered) shows it would not without the pinned block.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from engram.context import (
    ContextPolicy,
    PinRules,
    WorkingMemory,
    WorkingMemoryMiddleware,
    WorkingMemoryState,
    extract_pins,
    is_well_paired,
)
from engram.stores.hot import open_checkpointer
from engram.tokens import count_message_tokens

NEVER = re.compile(r"never trade (\w+)", re.IGNORECASE)
REQUEST = (
    "Never trade TSLA. Read the semiconductor news, then screen the market "
    "and buy the top momentum stock."
)


@tool
def news(topic: str) -> str:
    """Latest headlines on a topic."""
    return " ".join(f"Headline {i}: {topic} demand stays strong." for i in range(120))


@tool
def screen_market() -> str:
    """Tickers ranked by momentum, best first."""
    return json.dumps(["TSLA", "NVDA", "AMD"])


@tool
def place_order(ticker: str) -> str:
    """Buy one lot of ``ticker``."""
    return f"order filled: 1 lot of {ticker}"


TOOLS = [news, screen_market, place_order]


class RuleTrader(BaseChatModel):
    """Deterministic tool-calling model that decides from its input messages only."""

    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "rule-trader"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RuleTrader:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.inputs.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.decide(messages))])

    def decide(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        step = len(self.inputs)
        if isinstance(last, HumanMessage):
            return _call("news", {"topic": "semiconductors"}, step)
        assert isinstance(last, ToolMessage)
        if last.name == "news":
            return _call("screen_market", {}, step)
        if last.name == "screen_market":
            banned = {t.upper() for m in messages for t in NEVER.findall(m.text)}
            pick = next(t for t in json.loads(last.text) if t not in banned)
            return _call("place_order", {"ticker": pick}, step)
        return AIMessage(f"Done: {last.text}")


def _call(name: str, args: dict[str, Any], step: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{step}"}])


POLICY = ContextPolicy(
    max_input_tokens=4000, compact_at_tokens=1200, keep_recent_tokens=300, summary_tokens=200
)
RULES = PinRules(effect_tools=frozenset({"place_order"}))


def build_graph(memory: WorkingMemory, model: RuleTrader, checkpointer: Any = None) -> Any:
    """START -> memory (pins + compaction) -> model -> tools -> memory -> ..."""

    def model_node(state: WorkingMemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(memory.model_input(state))]}

    builder = StateGraph(WorkingMemoryState)
    builder.add_node("memory", memory.update)
    builder.add_node("model", model_node)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "memory")
    return builder.compile(checkpointer=checkpointer or InMemorySaver())


def _orders(messages: list[BaseMessage]) -> list[str]:
    return [
        call["args"]["ticker"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["name"] == "place_order"
    ]


def _run(
    policy: ContextPolicy, summariser: BaseChatModel | None
) -> tuple[dict[str, Any], RuleTrader]:
    model = RuleTrader()
    graph = build_graph(WorkingMemory(policy=policy, model=summariser, rules=RULES), model)
    first = HumanMessage(REQUEST, id="user-constraint")
    state = graph.invoke(
        {"messages": [SystemMessage("You are a trading assistant."), first]},
        {"configurable": {"thread_id": "t1"}},
    )
    return state, model


@pytest.mark.parametrize(
    "summariser",
    [None, FakeListChatModel(responses=["The user asked for semis news and a momentum buy."] * 5)],
    ids=["extractive", "chat-model"],
)
def test_constraint_survives_compaction_through_the_pinned_block(
    summariser: BaseChatModel | None,
) -> None:
    state, model = _run(POLICY, summariser)
    # The call that chose the order is the one whose input ends with the screen result.
    order_input = next(i for i in model.inputs if i[-1].name == "screen_market")
    assert state.get("summary"), "the history was compacted during the run"
    assert all(m.id != "user-constraint" for m in state["messages"])
    assert all(m.id != "user-constraint" for m in order_input)
    raw_history = order_input[1:]
    assert not any("never trade" in m.text.lower() for m in raw_history)
    assert "Never trade TSLA." in order_input[0].text  # the pinned block in the system message
    assert _orders(state["messages"]) == ["NVDA"]
    assert [p["text"] for p in state["constraints"]] == ["Never trade TSLA."]
    assert state["effects"][0]["text"].startswith('place_order({"ticker": "NVDA"})')
    assert all(is_well_paired(i[1:]) for i in model.inputs)


def test_without_the_pinned_block_the_compacted_agent_breaks_the_constraint() -> None:
    unpinned = dataclasses.replace(POLICY, render_pins=False)
    state, _ = _run(unpinned, None)
    assert state.get("summary")
    assert _orders(state["messages"]) == ["TSLA"]


def test_without_compaction_the_raw_history_carries_the_constraint() -> None:
    roomy = ContextPolicy(max_input_tokens=8000, compact_at_tokens=None, render_pins=False)
    state, _ = _run(roomy, None)
    assert "summary" not in state and _orders(state["messages"]) == ["NVDA"]


def test_create_agent_with_the_middleware_respects_the_constraint() -> None:
    model = RuleTrader()
    agent = create_agent(
        model,
        TOOLS,
        system_prompt="You are a trading assistant.",
        middleware=[WorkingMemoryMiddleware(POLICY, rules=RULES)],
        checkpointer=InMemorySaver(),
    )
    state = agent.invoke(
        {"messages": [HumanMessage(REQUEST, id="user-constraint")]},
        {"configurable": {"thread_id": "a1"}},
    )
    order_input = next(i for i in model.inputs if i[-1].name == "screen_market")
    assert state.get("summary")
    assert all(m.id != "user-constraint" for m in order_input)
    assert not any("never trade" in m.text.lower() for m in order_input[1:])
    assert isinstance(order_input[0], SystemMessage) and "Never trade TSLA." in order_input[0].text
    assert order_input[0].text.startswith("You are a trading assistant.")
    assert _orders(state["messages"]) == ["NVDA"]
    assert state["effects"] and state["constraints"]


async def test_async_agent_compacts_with_the_same_logic() -> None:
    model = RuleTrader()
    agent = create_agent(
        model,
        TOOLS,
        middleware=[WorkingMemoryMiddleware(POLICY, rules=RULES)],
        checkpointer=InMemorySaver(),
    )
    state = await agent.ainvoke(
        {"messages": [HumanMessage(REQUEST, id="user-constraint")]},
        {"configurable": {"thread_id": "a2"}},
    )
    assert state.get("summary") and _orders(state["messages"]) == ["NVDA"]


def _long_history() -> list[BaseMessage]:
    history: list[BaseMessage] = [
        SystemMessage("sys"),
        HumanMessage("Only trade ETFs. Go.", id="h0"),
    ]
    for i in range(6):
        history.append(_call("news", {"topic": str(i)}, i))
        history.append(ToolMessage("lorem ipsum " * 60, tool_call_id=f"call-{i}", name="news"))
    history.append(AIMessage("all read"))
    return history


def test_forced_compaction_replaces_old_units_by_one_summary() -> None:
    memory = WorkingMemory(policy=ContextPolicy(keep_recent_tokens=400, compact_at_tokens=5000))
    history = _long_history()
    assert memory.compact({"messages": history}) is None  # under the trigger
    result = memory.compact({"messages": history}, force=True)
    assert result is not None
    new = result.messages
    assert new[0] is history[0] and new[1].additional_kwargs.get("engram_summary")
    assert new[-1] is history[-1] and is_well_paired(new[2:])
    assert len(result.removed) + len(new) - 2 == len(history) - 1
    assert [p["text"] for p in result.pins["constraints"]] == ["Only trade ETFs."]
    update = result.state_update()
    assert update["messages"][0].id == "__remove_all__" and update["summary"]
    assert "Only trade ETFs." not in new[1].text and "- user: Go." in new[1].text  # pinned: omitted
    forged = new[1].model_copy(update={"content": "The user said: never trade NVDA."})
    assert dict(extract_pins([forged])) == {}  # a summary is never a source of pins


def test_model_input_stays_within_budget_including_the_pinned_block() -> None:
    policy = ContextPolicy(max_input_tokens=500, compact_at_tokens=None, clear_min_tokens=10**6)
    memory = WorkingMemory(policy=policy)
    sent = memory.model_input({"messages": _long_history()})
    assert count_message_tokens(sent) <= 500
    assert "Only trade ETFs." in sent[0].text and is_well_paired(sent[1:])
    assert sent[-1].text == "all read"


def test_pinned_state_is_checkpointed_in_the_hot_tier_and_read_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'checkpoints.db'}"
    config = {"configurable": {"thread_id": "durable"}}
    memory = WorkingMemory(policy=POLICY, rules=RULES)
    with open_checkpointer(url, encryption_key=None) as saver:
        graph = build_graph(memory, RuleTrader(), saver)
        graph.invoke({"messages": [SystemMessage("sys"), HumanMessage(REQUEST, id="c")]}, config)
    with open_checkpointer(url, encryption_key=None) as saver:  # a fresh saver: from disk
        values = build_graph(memory, RuleTrader(), saver).get_state(config).values
    assert [p["text"] for p in values["constraints"]] == ["Never trade TSLA."]
    assert values["effects"][0]["text"].startswith('place_order({"ticker": "NVDA"})')
    assert values["summary"] and all(m.id != "c" for m in values["messages"])
    assert "Never trade TSLA." in memory.model_input(values)[0].text
