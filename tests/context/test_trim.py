"""Trimming invariants (property tests) and selective deletion of old tool results."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from engram.context import clear_tool_results, group_units, is_well_paired, trim_to_budget
from engram.errors import InvalidInputError
from engram.tokens import count_message_tokens

WORDS = st.lists(st.sampled_from(["NVDA", "revenue", "grew", "12%", "the", "margin", "risk"]))


def _text(words: list[str]) -> str:
    return " ".join(words) or "ok"


@st.composite
def conversations(draw: Any) -> list[BaseMessage]:
    """A system message, then turns of user / tool rounds / answers, with some defects."""
    messages: list[BaseMessage] = [SystemMessage(_text(draw(WORDS)))]
    next_id = 0
    for _ in range(draw(st.integers(0, 6))):
        messages.append(HumanMessage(_text(draw(WORDS))))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"c{next_id + k}" for k in range(draw(st.integers(1, 3)))]
            next_id += len(ids)
            calls = [{"name": "quote", "args": {"q": _text(draw(WORDS))}, "id": i} for i in ids]
            messages.append(AIMessage(content=_text(draw(WORDS)), tool_calls=calls))
            answered = ids[:-1] if draw(st.integers(0, 9)) == 0 else ids  # 1 in 10: unanswered
            for call_id in answered:
                size = draw(st.integers(0, 60))
                messages.append(ToolMessage(" ".join(["data"] * size), tool_call_id=call_id))
        if draw(st.integers(0, 9)) == 0:
            messages.append(ToolMessage("stray", tool_call_id="nobody-called-this"))
        messages.append(AIMessage(_text(draw(WORDS))))
    return messages


def _is_suffix_of_units(kept: list[BaseMessage], source: list[BaseMessage]) -> bool:
    units = group_units(source[1:])
    flat = [m for unit in units for m in unit]
    body = kept[1:]
    return flat[len(flat) - len(body) :] == body if body else True


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(conversation=conversations(), extra=st.integers(0, 600), start_on_human=st.booleans())
def test_trimmed_history_keeps_invariants(
    conversation: list[BaseMessage], extra: int, start_on_human: bool
) -> None:
    budget = count_message_tokens(conversation[:1]) + extra
    trimmed = trim_to_budget(conversation, budget, start_on_human=start_on_human)
    assert count_message_tokens(trimmed) <= budget
    assert trimmed[0] is conversation[0]
    assert is_well_paired(trimmed)
    assert not any(
        m.tool_call_id == "nobody-called-this" for m in trimmed if isinstance(m, ToolMessage)
    )
    if not start_on_human:
        assert _is_suffix_of_units(trimmed, conversation)
        units = group_units(conversation[1:])
        if units and count_message_tokens(units[-1]) <= extra:
            assert trimmed[-len(units[-1]) :] == units[-1]  # the latest turn survives
    elif len(trimmed) > 1 and any(isinstance(m, HumanMessage) for m in trimmed):
        assert isinstance(trimmed[1], HumanMessage)


def test_a_tool_call_and_its_results_are_dropped_together() -> None:
    call = AIMessage("", tool_calls=[{"name": "news", "args": {}, "id": "a"}])
    result = ToolMessage("headline " * 200, tool_call_id="a")
    history = [SystemMessage("sys"), HumanMessage("hi"), call, result, AIMessage("done")]
    budget = count_message_tokens([history[0], history[-1]])
    trimmed = trim_to_budget(history, budget, start_on_human=False)
    assert trimmed == [history[0], history[-1]]


def test_budget_below_the_system_prompt_is_an_error() -> None:
    with pytest.raises(InvalidInputError):
        trim_to_budget([SystemMessage("a long system prompt " * 20)], 10)


def test_unanswered_call_is_not_sent() -> None:
    call = AIMessage("", tool_calls=[{"name": "news", "args": {}, "id": "a"}])
    assert trim_to_budget([HumanMessage("hi"), call], 1000) == [HumanMessage("hi")]


def _tool_history() -> list[BaseMessage]:
    history: list[BaseMessage] = [SystemMessage("sys"), HumanMessage("go")]
    for i in range(5):
        history.append(
            AIMessage("", tool_calls=[{"name": "news", "args": {"i": i}, "id": f"t{i}"}])
        )
        history.append(
            ToolMessage(f"item{i} " * (10 if i == 1 else 300), tool_call_id=f"t{i}", name="news")
        )
    history.append(AIMessage("summary of the news"))
    return history


def test_old_large_tool_results_become_stubs() -> None:
    history = _tool_history()
    cleared = clear_tool_results(history, keep_last=2, min_tokens=100)
    tools = [m for m in cleared if isinstance(m, ToolMessage)]
    assert [("cleared" in m.text) for m in tools] == [True, False, True, False, False]
    assert "item1" in tools[1].text and "item4" in tools[4].text  # small or recent: verbatim
    assert [m.tool_call_id for m in tools] == ["t0", "t1", "t2", "t3", "t4"]
    assert is_well_paired(cleared[1:])
    assert count_message_tokens(cleared) < count_message_tokens(history) - 1000  # 2 x ~600
    assert "item0" in history[3].text  # the input list is not modified


def test_clearing_respects_excluded_tools_and_is_idempotent() -> None:
    history = _tool_history()
    assert clear_tool_results(history, keep_last=0, min_tokens=0, exclude_tools=["news"]) == history
    once = clear_tool_results(history, keep_last=0, min_tokens=0)
    assert clear_tool_results(once, keep_last=0, min_tokens=0) == once
    with pytest.raises(InvalidInputError):
        clear_tool_results(history, keep_last=-1)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(conversation=conversations(), keep_last=st.integers(0, 4), min_tokens=st.integers(0, 80))
def test_clearing_keeps_every_pairing_and_only_shrinks(
    conversation: list[BaseMessage], keep_last: int, min_tokens: int
) -> None:
    cleared = clear_tool_results(conversation, keep_last=keep_last, min_tokens=min_tokens)
    assert len(cleared) == len(conversation)
    for before, after in zip(conversation, cleared, strict=True):
        assert type(before) is type(after)
        if isinstance(before, ToolMessage):
            assert isinstance(after, ToolMessage) and after.tool_call_id == before.tool_call_id
            assert count_message_tokens([after]) <= max(count_message_tokens([before]), 40)
        else:
            assert after is before
    tools = [m for m in cleared if isinstance(m, ToolMessage)]
    recent = tools[len(tools) - keep_last :] if keep_last else []
    assert all("cleared" not in m.text for m in recent)
    shape = [[type(m).__name__ for m in unit] for unit in group_units(conversation[1:])]
    assert [[type(m).__name__ for m in unit] for unit in group_units(cleared[1:])] == shape
