"""The Market Analyst: engram's reference agent (LangGraph).

router -> planner -> executor (ReAct over offline market-data tools) -> reporter
-> reviewer -> publish, interrupted before ``publish`` for human approval, with
an idempotent publication outbox. The default model is rule-based (no LLM).
"""

from engram.agent._analyst import (
    DURABILITY,
    CheckpointInfo,
    EventSink,
    MarketAnalyst,
    StepEvent,
    ThreadStatus,
    analyst_over,
    default_outbox,
    home_outbox,
    resolve_model,
    url_outbox,
)
from engram.agent._data import MarketData, load_market_data
from engram.agent._graph import AnalystNodes, build_graph, compile_graph
from engram.agent._offline import OfflineAnalystModel
from engram.agent._state import AnalystState, Approval, Publication, Review
from engram.agent._tools import make_tools
from engram.backends.sqlite.outbox import PublicationLedger
from engram.stores.hot.outbox import Outbox, PublishedReport, draft_hash
from engram.tools import memory_tools

__all__ = [
    "DURABILITY",
    "AnalystNodes",
    "AnalystState",
    "Approval",
    "CheckpointInfo",
    "EventSink",
    "MarketAnalyst",
    "MarketData",
    "OfflineAnalystModel",
    "Outbox",
    "Publication",
    "PublicationLedger",
    "PublishedReport",
    "Review",
    "StepEvent",
    "ThreadStatus",
    "analyst_over",
    "build_graph",
    "compile_graph",
    "default_outbox",
    "draft_hash",
    "home_outbox",
    "load_market_data",
    "make_tools",
    "memory_tools",
    "resolve_model",
    "url_outbox",
]
