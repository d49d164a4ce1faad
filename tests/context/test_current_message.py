"""The user's current message is never dropped silently: kept, cut with a marker, or refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from engram.context import (
    ContextPolicy,
    WorkingMemory,
    WorkingMemoryMiddleware,
    is_well_paired,
    trim_to_budget,
)
from engram.errors import InvalidInputError
from engram.tokens import count_message_tokens, message_tokens

OPENING = "Summarise this filing for me:"
QUESTION = "Which segment grew fastest, and why?"
FILING = f"{OPENING} {'Revenue grew again. ' * 150}{QUESTION}"


def _memory(budget: int) -> WorkingMemory:
    return WorkingMemory(ContextPolicy(max_input_tokens=budget, compact_at_tokens=None))


def _current(sent: list[BaseMessage], message_id: str) -> BaseMessage:
    return next(m for m in sent if m.id == message_id)


def test_a_current_message_over_the_budget_is_cut_with_a_visible_marker() -> None:
    state = {
        "messages": [
            SystemMessage("You are a trading assistant."),
            HumanMessage("Never trade on margin.", id="h1"),
            AIMessage("Understood.", id="a1"),
            HumanMessage(FILING, id="h2"),
        ]
    }
    sent = _memory(300).model_input(state)
    assert count_message_tokens(sent) <= 300
    cut = _current(sent, "h2")
    assert sent[-1] is cut and isinstance(cut, HumanMessage)
    assert cut.text.startswith(OPENING) and cut.text.endswith(QUESTION)  # both ends kept
    assert "cut" in cut.text and len(cut.text) < len(FILING)
    assert "Never trade on margin." in sent[0].text  # the pins still ride along


def test_the_input_state_is_not_modified_by_the_cut() -> None:
    original = HumanMessage(FILING, id="h2")
    _memory(300).model_input({"messages": [SystemMessage("sys"), original]})
    assert original.text == FILING


def test_a_current_message_that_cannot_fit_even_cut_is_refused_clearly() -> None:
    system = SystemMessage("You are a trading assistant. " + "Follow the house rules. " * 50)
    budget = message_tokens(system) + 10
    with pytest.raises(InvalidInputError, match="current user message") as caught:
        _memory(budget).model_input({"messages": [system, HumanMessage(FILING, id="h2")]})
    assert "h2" in str(caught.value) and "system prompt" in str(caught.value)


def test_a_cut_keeps_non_text_blocks_and_the_pairs_after_the_request() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    request = HumanMessage([{"type": "text", "text": FILING}, image], id="h2")
    call = AIMessage("", tool_calls=[{"name": "quote", "args": {"t": "NVDA"}, "id": "c1"}])
    result = ToolMessage("NVDA 812.34", tool_call_id="c1", name="quote")
    sent = trim_to_budget([SystemMessage("sys"), request, call, result], 400)
    assert count_message_tokens(sent) <= 400
    assert sent[2:] == [call, result] and is_well_paired(sent[1:])
    blocks = sent[1].content
    assert isinstance(blocks, list) and image in blocks
    assert sent[1].text.startswith(OPENING) and sent[1].text.endswith(QUESTION)


def test_mid_run_tool_results_never_push_out_the_request() -> None:
    """An agent working on a request: older tool rounds of this turn give way, the request
    and the latest round stay."""
    history: list[BaseMessage] = [SystemMessage("sys"), HumanMessage("Old question.", id="h0")]
    history += [AIMessage("Old answer.", id="a0"), HumanMessage("Rank the semis.", id="h1")]
    for i in range(4):
        history.append(
            AIMessage("", tool_calls=[{"name": "news", "args": {"i": i}, "id": f"c{i}"}])
        )
        history.append(ToolMessage(f"headline{i} " * 60, tool_call_id=f"c{i}", name="news"))
    budget = count_message_tokens([history[0], history[3], *history[-4:]]) + 5
    sent = trim_to_budget(history, budget)
    assert count_message_tokens(sent) <= budget and is_well_paired(sent[1:])
    assert sent[1].id == "h1" and sent[-4:] == history[-4:]
    assert all(m.id not in ("h0", "a0") for m in sent)


def test_an_answered_turn_is_trimmed_as_before() -> None:
    """When the last human message already has its answer, nothing is in flight: plain
    recency trimming applies and nothing is cut."""
    history = [SystemMessage("sys"), HumanMessage(FILING, id="h1"), AIMessage("Done.", id="a1")]
    budget = count_message_tokens([history[0], history[2]]) + 3
    assert trim_to_budget(history, budget) == [history[0], history[2]]


class Recorder(BaseChatModel):
    """Records each input and answers with a fixed text."""

    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recorder"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.inputs.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))])


def test_the_middleware_sends_the_cut_request() -> None:
    model = Recorder()
    policy = ContextPolicy(max_input_tokens=300, compact_at_tokens=None)
    agent = create_agent(model, [], middleware=[WorkingMemoryMiddleware(policy)])
    agent.invoke({"messages": [HumanMessage(FILING, id="h2")]})
    (sent,) = model.inputs
    assert count_message_tokens(sent) <= 300
    assert sent[-1].text.startswith(OPENING) and sent[-1].text.endswith(QUESTION)


@st.composite
def in_flight(draw: Any) -> list[BaseMessage]:
    """History whose last human message is still being worked on (tool rounds after it)."""
    word = st.sampled_from(["NVDA", "revenue", "grew", "12%", "the", "margin", "risk", "\u200d"])
    messages: list[BaseMessage] = [SystemMessage(" ".join(draw(st.lists(word, max_size=30))))]
    for turn in range(draw(st.integers(0, 3))):
        messages += [HumanMessage(f"old {turn}"), AIMessage(f"answer {turn}")]
    size = draw(st.integers(1, 3000))
    messages.append(HumanMessage(" ".join(draw(word) for _ in range(size)), id="current"))
    for call in range(draw(st.integers(0, 3))):
        messages.append(AIMessage("", tool_calls=[{"name": "q", "args": {}, "id": f"c{call}"}]))
        messages.append(ToolMessage("data " * draw(st.integers(0, 200)), tool_call_id=f"c{call}"))
    return messages


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(history=in_flight(), extra=st.integers(0, 800), start_on_human=st.booleans())
def test_the_current_message_is_always_sent_or_refused(
    history: list[BaseMessage], extra: int, start_on_human: bool
) -> None:
    budget = message_tokens(history[0]) + extra
    try:
        sent = trim_to_budget(history, budget, start_on_human=start_on_human)
    except InvalidInputError as exc:
        assert "current user message" in str(exc)
        return
    assert count_message_tokens(sent) <= budget and is_well_paired(sent[1:])
    current = _current(sent, "current")
    original = _current(history, "current")
    assert current.text == original.text or "cut" in current.text
