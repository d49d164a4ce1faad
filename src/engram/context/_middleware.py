"""Working memory as LangChain agent middleware (``create_agent(..., middleware=[...])``).

``before_model`` records new pins in state and compacts the stored history when it is over the
trigger (a state change, checkpointed like any other). ``wrap_model_call`` then shapes only the
request: the pinned block is appended to the system message, old tool results are stubbed and the
history is trimmed to the budget, leaving the stored history untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from engram.context._compact import ContextPolicy, WorkingMemory
from engram.context._pins import DEFAULT_RULES, PinnedState, PinRules
from engram.tokens import TokenCounter


class WorkingMemoryAgentState(AgentState[Any], PinnedState, total=False):
    """``create_agent`` state with the pinned fields and the last summary."""

    summary: str


class WorkingMemoryMiddleware(AgentMiddleware[WorkingMemoryAgentState, Any, Any]):
    """Pins, compaction, tool-result clearing and trimming around every model call."""

    state_schema = WorkingMemoryAgentState

    def __init__(
        self,
        policy: ContextPolicy | None = None,
        *,
        model: BaseChatModel | None = None,
        rules: PinRules = DEFAULT_RULES,
        counter: TokenCounter | None = None,
        memory: WorkingMemory | None = None,
    ) -> None:
        super().__init__()
        self.memory = memory or WorkingMemory(
            policy=policy or ContextPolicy(), model=model, rules=rules, counter=counter
        )

    def before_model(
        self, state: WorkingMemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.memory.update(state) or None

    async def abefore_model(
        self, state: WorkingMemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await self.memory.aupdate(state) or None

    def _shape(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        pins, _ = self.memory.pins(request.state)
        system, messages = self.memory.shape(request.system_message, request.messages, pins)
        return request.override(system_message=system, messages=messages)  # type: ignore[arg-type]

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._shape(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._shape(request))
