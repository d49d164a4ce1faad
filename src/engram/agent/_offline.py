"""The default model: a deterministic offline LangChain chat model. It uses no LLM.

It reads the role tag of the system prompt and follows fixed rules: the planner
lists tool calls for the tickers, the executor issues the next planned tool call
(one per turn) until each has a result, the reporter writes the brief from the
tool results, and the reviewer checks the draft.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from engram.agent import _prompts as prompts
from engram.agent import _report as rules


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _plan(messages: Sequence[BaseMessage]) -> AIMessage:
    text = _text(messages[-1])
    tickers = [t.strip() for t in prompts.field(text, "Tickers").split(",") if t.strip()]
    facts = prompts.block_items(text, "user_facts")
    return AIMessage(content="\n".join(rules.plan_steps(tickers, facts)))


def _next_call(messages: Sequence[BaseMessage]) -> AIMessage:
    steps = prompts.parse_plan(_text(messages[0]))
    done = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    pending = [m for m in messages if isinstance(m, ToolMessage)]
    if done >= len(steps) or len(pending) < done:
        return AIMessage(content=f"done: {len(pending)} of {len(steps)} planned steps have results")
    name, args = steps[done]
    call = ToolCall(name=name, args=args, id=f"call_{done + 1}_{name}", type="tool_call")
    return AIMessage(content="", tool_calls=[call])


def _report(messages: Sequence[BaseMessage]) -> AIMessage:
    text = _text(messages[-1])
    tickers = [t.strip() for t in prompts.field(text, "Tickers").split(",") if t.strip()]
    return AIMessage(content=rules.write_report(tickers, prompts.parse_tool_results(text)))


def _review(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(content=json.dumps(rules.review_report(_text(messages[-1]))))


_RULES: dict[str, Callable[[Sequence[BaseMessage]], AIMessage]] = {
    "planner": _plan,
    "executor": _next_call,
    "reporter": _report,
    "reviewer": _review,
}


class OfflineAnalystModel(BaseChatModel):
    """A deterministic, rule-based chat model for the Market Analyst (no LLM, no network)."""

    @property
    def _llm_type(self) -> str:
        return "engram-offline-analyst"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        role = prompts.role_of(_text(system)) if system else None
        rule = _RULES.get(role or "")
        if rule is None:
            reply = AIMessage(content="I only follow the Market Analyst's prompts.")
        else:
            reply = rule(
                [m for m in messages if m is not system] if role != "executor" else messages
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept tools like any tool-calling model (the rules only call planned tools)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)
