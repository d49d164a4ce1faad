"""Malformed input to working memory raises engram's InvalidInputError, never a bare error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from engram.context import (
    ContextPolicy,
    WorkingMemory,
    clear_tool_results,
    extract_pins,
    merge_pins,
    render_pins,
    trim_to_budget,
)
from engram.errors import InvalidInputError

HI = [HumanMessage("hello there " * 50)]
MEMORY = WorkingMemory()
PIN = {"kind": "constraint", "key": "constraint:x", "text": "Never x.", "message_id": None}

BAD: dict[str, Callable[[], Any]] = {
    "str message": lambda: MEMORY.model_input({"messages": ["hello"]}),
    "dict message": lambda: MEMORY.model_input({"messages": [{"role": "user", "content": "hi"}]}),
    "update with a str message": lambda: MEMORY.update({"messages": ["hello"]}),
    "state is a list": lambda: MEMORY.model_input([HumanMessage("hi")]),  # type: ignore[arg-type]
    "constraints is a str": lambda: MEMORY.model_input({"messages": HI, "constraints": "never"}),
    "pin without text": lambda: MEMORY.model_input(
        {"messages": HI, "constraints": [{"key": "constraint:x"}]}
    ),
    "pin without key": lambda: MEMORY.update({"messages": HI, "constraints": [{"text": "x"}]}),
    "policy budget as str": lambda: ContextPolicy(max_input_tokens="100"),  # type: ignore[arg-type]
    "policy budget nan": lambda: ContextPolicy(max_input_tokens=float("nan")),  # type: ignore[arg-type]
    "policy budget inf": lambda: ContextPolicy(max_input_tokens=float("inf")),  # type: ignore[arg-type]
    "policy budget bool": lambda: ContextPolicy(max_input_tokens=True),
    "policy trigger nan": lambda: ContextPolicy(compact_at_tokens=float("nan")),  # type: ignore[arg-type]
    "policy keep_last str": lambda: ContextPolicy(clear_keep_last="3"),  # type: ignore[arg-type]
    "policy exclude str": lambda: ContextPolicy(clear_exclude_tools="news"),  # type: ignore[arg-type]
    "trim negative": lambda: trim_to_budget(HI, -5),
    "trim str budget": lambda: trim_to_budget(HI, "10"),  # type: ignore[arg-type]
    "trim nan budget": lambda: trim_to_budget(HI, float("nan")),  # type: ignore[arg-type]
    "trim inf budget": lambda: trim_to_budget(HI, float("inf")),  # type: ignore[arg-type]
    "trim None": lambda: trim_to_budget(None, 10),  # type: ignore[arg-type]
    "trim a str": lambda: trim_to_budget("hello", 10),  # type: ignore[arg-type]
    "trim str in list": lambda: trim_to_budget(["hi"], 10),  # type: ignore[list-item]
    "trim reserved nan": lambda: trim_to_budget(HI, 10, reserved_tokens=float("nan")),  # type: ignore[arg-type]
    "clear min_tokens str": lambda: clear_tool_results(HI, min_tokens="5"),  # type: ignore[arg-type]
    "clear exclude str": lambda: clear_tool_results(HI, exclude_tools="news"),
    "clear None": lambda: clear_tool_results(None),  # type: ignore[arg-type]
    "render list of str": lambda: render_pins({"constraints": ["never"]}),
    "render not a mapping": lambda: render_pins(["never"]),  # type: ignore[arg-type]
    "render max_sources str": lambda: render_pins({}, max_sources="5"),  # type: ignore[arg-type]
    "extract str in list": lambda: extract_pins(["never buy crypto"]),  # type: ignore[list-item]
    "extract a str": lambda: extract_pins("never buy crypto"),  # type: ignore[arg-type]
    "merge a str pin": lambda: merge_pins([PIN], ["never"]),  # type: ignore[list-item]
}


@pytest.mark.parametrize("call", BAD.values(), ids=BAD.keys())
def test_bad_input_is_a_typed_error(call: Callable[[], Any]) -> None:
    with pytest.raises(InvalidInputError):
        call()


def test_messages_name_the_problem() -> None:
    with pytest.raises(InvalidInputError, match=r"messages'\]\[0\] is a str"):
        MEMORY.model_input({"messages": ["hello"]})
    with pytest.raises(InvalidInputError, match="constraints"):
        MEMORY.model_input({"messages": HI, "constraints": "never"})
    with pytest.raises(InvalidInputError, match="max_input_tokens"):
        ContextPolicy(max_input_tokens=float("nan"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError) as caught:
        trim_to_budget(HI, -5)
    assert "system prompt" not in str(caught.value) and "max_tokens" in str(caught.value)


def test_good_input_still_passes() -> None:
    tool = ToolMessage("x " * 300, tool_call_id="c1", name="news")
    assert clear_tool_results([tool], keep_last=0, exclude_tools=("news",)) == [tool]
    assert trim_to_budget((), 0) == []
    assert merge_pins(None, [PIN | {"active": True}]) == [PIN | {"active": True}]  # type: ignore[operator]
    assert render_pins({"constraints": None}) == ""
