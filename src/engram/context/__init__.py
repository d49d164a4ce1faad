"""Working memory: what enters the next model call.

Token-budget trimming that never splits a tool call from its results, selective deletion of old
tool results, summaries (chat model or extractive fallback) and compaction that keeps
authoritative state -- user constraints, approvals, completed effects, sources -- in typed state
fields re-rendered into every call. Plain functions for custom LangGraph graphs, and
:class:`WorkingMemoryMiddleware` for ``langchain.agents.create_agent``.
"""

from engram.context._compact import Compaction, ContextPolicy, WorkingMemory
from engram.context._middleware import WorkingMemoryAgentState, WorkingMemoryMiddleware
from engram.context._pins import (
    Pin,
    PinnedState,
    PinRules,
    WorkingMemoryState,
    extract_pins,
    merge_pins,
    render_pins,
)
from engram.context._summary import Summary, asummarise, extractive_summary, summarise
from engram.context._trim import (
    clear_tool_results,
    compaction_cut,
    group_units,
    is_well_paired,
    trim_to_budget,
)

__all__ = [
    "Compaction",
    "ContextPolicy",
    "Pin",
    "PinRules",
    "PinnedState",
    "Summary",
    "WorkingMemory",
    "WorkingMemoryAgentState",
    "WorkingMemoryMiddleware",
    "WorkingMemoryState",
    "asummarise",
    "clear_tool_results",
    "compaction_cut",
    "extract_pins",
    "extractive_summary",
    "group_units",
    "is_well_paired",
    "merge_pins",
    "render_pins",
    "summarise",
    "trim_to_budget",
]
