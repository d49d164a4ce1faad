"""Any LangChain chat model drives the graph; the reviewer sees the draft and nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from analyst_support import PRINCIPAL, ledger_rows
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from engram.agent import MarketAnalyst

REPORT = "# Market brief: AMD\n\nA scripted report.\n"


class ScriptedModel(FakeMessagesListChatModel):
    """Replays fixed answers and records every prompt it receives."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self


def _script() -> ScriptedModel:
    call = {"name": "get_fundamentals", "args": {"ticker": "AMD"}, "id": "c1", "type": "tool_call"}
    return ScriptedModel(
        responses=[
            AIMessage('1. get_fundamentals {"ticker": "AMD"} - valuation'),
            AIMessage("", tool_calls=[call]),
            AIMessage("done"),
            AIMessage(REPORT),
            AIMessage('Verdict: {"verdict": "revise", "score": 0.4, "issues": ["thin"]}'),
        ],
    )


def test_a_scripted_chat_model_runs_the_whole_graph(tmp_path: Path) -> None:
    model = _script()
    analyst = MarketAnalyst(home=tmp_path, model=model)
    status = analyst.run(PRINCIPAL, "Brief on AMD please", thread_id="t1")
    assert status.stage == "awaiting_approval" and status.tool_calls == 1
    assert status.draft == REPORT
    assert status.review == {"verdict": "revise", "score": 0.4, "issues": ["thin"]}

    executor_prompt = model.prompts[2]
    results = [m for m in executor_prompt if isinstance(m, ToolMessage)]
    assert len(results) == 1 and '"name": "Advanced Micro Devices"' in str(results[0].content)

    reviewer_prompt = model.prompts[4]
    assert [type(m) for m in reviewer_prompt] == [SystemMessage, HumanMessage]
    assert reviewer_prompt[1].content == REPORT, "the reviewer sees the draft and no run history"

    assert analyst.approve(PRINCIPAL, "t1").stage == "published"
    assert len(ledger_rows(tmp_path)) == 1


@pytest.mark.postgres
def test_pause_and_approve_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    first = MarketAnalyst(home=tmp_path, hot_url=postgres_url)
    paused = first.run(PRINCIPAL, "Brief on MSFT", thread_id="pg-1")
    assert paused.stage == "awaiting_approval"
    second = MarketAnalyst(home=tmp_path, hot_url=postgres_url)
    done = second.approve(PRINCIPAL, "pg-1", draft_hash=paused.draft_hash)
    assert done.stage == "published" and done.draft == paused.draft
    assert [h.ran for h in second.history(PRINCIPAL, "pg-1")][-1] == ("publish",)
    published = [p for p in second.publications(PRINCIPAL) if p.thread_id == "pg-1"]
    assert len(published) == 1 and published[0].report == paused.draft
    assert not (tmp_path / "outbox.db").exists()  # the outbox is beside the checkpoints


def test_bad_tool_calls_become_error_results_not_crashes(tmp_path: Path) -> None:
    calls = [
        {"name": "get_fundamentals", "args": {"ticker": "ZZZZ"}, "id": "c1", "type": "tool_call"},
        {"name": "launch_rocket", "args": {}, "id": "c2", "type": "tool_call"},
        {
            "name": "get_news",
            "args": {"ticker": "AMD", "limit": "many"},
            "id": "c3",
            "type": "tool_call",
        },
    ]
    model = ScriptedModel(
        responses=[
            AIMessage("1. anything"),
            AIMessage("", tool_calls=calls),
            AIMessage("done"),
            AIMessage(REPORT),
            AIMessage('{"verdict": "approve", "score": 1, "issues": []}'),
        ]
    )
    status = MarketAnalyst(home=tmp_path, model=model).run(PRINCIPAL, "AMD?", thread_id="t1")
    assert status.stage == "awaiting_approval"
    results = [m for m in model.prompts[2] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["error", "error", "error"]
    assert "unknown ticker 'ZZZZ'" in str(results[0].content)
    assert "no tool 'launch_rocket'" in str(results[1].content)
