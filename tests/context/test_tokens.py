"""Token counting: offline counters, message accounting, no network for tiktoken."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engram.context import ContextPolicy, WorkingMemory
from engram.errors import ConfigError, InvalidInputError
from engram.tokens import (
    ApproxCounter,
    WordPieceCounter,
    count_message_tokens,
    count_tokens,
    get_counter,
    message_tokens,
    tiktoken_available,
)

# Reference counts from the real cl100k_base encoding (tiktoken), recorded once.
CL100K = [
    ("Caroline went to the LGBTQ support group on 7 May 2023 and felt really welcomed there.", 21),
    ('{"ticker": "NVDA", "price": 812.34, "volume": 48211934, "date": "2026-03-14"}', 34),
    ("Never trade TSLA on my behalf. Only large-cap US equities, and do not include crypto.", 22),
    (
        "The quarterly revenue grew 12% year-over-year, driven by data-centre demand; "
        "gross margin widened to 74.6%.",
        27,
    ),
    ("def count(text):\n    return len(text.split())\n", 10),
]


@pytest.mark.parametrize(("text", "expected"), CL100K)
def test_approx_is_within_15_percent_of_cl100k(text: str, expected: int) -> None:
    assert abs(ApproxCounter().count(text) - expected) <= 0.15 * expected


def test_long_and_random_pieces_cost_more() -> None:
    approx = ApproxCounter()
    assert approx.count("cat") == 1
    assert approx.count("antidisestablishmentarianism") > 3
    assert approx.count("czNmcy1wcml2YXRlL3Jhd3BpeGVsX2ltYWdl") >= 10


def test_count_tokens_basics() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    with pytest.raises(InvalidInputError):
        count_tokens(b"bytes")  # type: ignore[arg-type]


def test_wordpiece_counts_past_the_model_window() -> None:
    text = "alpha beta " * 300
    assert WordPieceCounter().count(text) == 600  # truncation at 128 is switched off


def test_tiktoken_is_never_downloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"not the real file")
    assert not tiktoken_available("cl100k_base")
    with pytest.raises(ConfigError):
        get_counter.__wrapped__("cl100k_base")
    assert isinstance(get_counter.__wrapped__("auto"), ApproxCounter)
    with pytest.raises(ConfigError):
        get_counter.__wrapped__("sentencepiece")


def test_message_tokens_count_tool_calls_and_overhead() -> None:
    call = {"name": "get_quote", "args": {"ticker": "NVDA", "fields": ["price", "pe"]}, "id": "c1"}
    bare = AIMessage(content="")
    with_call = AIMessage(content="", tool_calls=[call])
    assert message_tokens(bare) > 0
    assert message_tokens(with_call) >= message_tokens(bare) + 8
    history = [
        SystemMessage("sys"),
        HumanMessage("hi"),
        with_call,
        ToolMessage("1", tool_call_id="c1"),
    ]
    assert count_message_tokens(history) == sum(message_tokens(m) for m in history)


def test_content_blocks_are_counted() -> None:
    text_only = HumanMessage(content=[{"type": "text", "text": "look at this chart please"}])
    with_image = HumanMessage(
        content=[
            {"type": "text", "text": "look at this chart please"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]
    )
    assert message_tokens(text_only) == message_tokens(HumanMessage("look at this chart please"))
    assert message_tokens(with_image) > message_tokens(text_only) + 50


def test_long_texts_are_counted_and_memoised() -> None:
    calls: list[str] = []

    class Spy(ApproxCounter):
        def count(self, text: str) -> int:
            calls.append(text)
            return super().count(text)

    spy = Spy()
    long_text = "quarterly revenue grew " * 400
    first = count_tokens(long_text, spy)
    assert first == ApproxCounter().count(long_text) and first > 1000
    assert count_tokens(long_text, spy) == first and count_tokens("short one", spy) == 2
    assert count_tokens("short one", spy) == 2
    assert len(calls) == 2  # one real count per distinct text


def test_usable_as_langchain_trim_messages_counter() -> None:
    from langchain_core.messages import trim_messages

    history = [SystemMessage("sys")] + [HumanMessage(f"message number {i}") for i in range(20)]
    budget = count_message_tokens(history[:1] + history[-3:])
    kept = trim_messages(
        history, max_tokens=budget, token_counter=count_message_tokens, include_system=True
    )
    assert kept == history[:1] + history[-3:]


THOUGHT = "Let me weigh the position sizes carefully. " * 200
CARRIERS = {
    "thinking": {"type": "thinking", "thinking": THOUGHT, "signature": "sig"},
    "reasoning": {"type": "reasoning", "reasoning": THOUGHT},
    "reasoning-summary": {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": THOUGHT}],
    },
    "tool_result-str": {"type": "tool_result", "tool_use_id": "x", "content": THOUGHT},
    "tool_result-blocks": {
        "type": "tool_result",
        "tool_use_id": "x",
        "content": [{"type": "text", "text": THOUGHT}],
    },
    "json": {"type": "json", "json": {"notes": THOUGHT}},
    "unknown-type": {"type": "vendor_note", "note": THOUGHT},
}


@pytest.mark.parametrize("block", CARRIERS.values(), ids=CARRIERS.keys())
def test_blocks_are_charged_for_the_text_they_carry(block: dict[str, object]) -> None:
    """A thinking, reasoning, tool_result or json block costs its text, not a flat 85."""
    message = AIMessage(content=[block, {"type": "text", "text": "Done."}])
    assert message_tokens(message) >= count_tokens(THOUGHT)
    assert message_tokens(message) <= count_tokens(THOUGHT) * 1.1 + 20


def test_opaque_signatures_are_not_read_as_text() -> None:
    """A thinking block's signature (and encrypted reasoning) is not text the model reads."""
    plain = AIMessage(content=[{"type": "thinking", "thinking": "short thought"}])
    signed = AIMessage(
        content=[{"type": "thinking", "thinking": "short thought", "signature": "Zm9v" * 4000}]
    )
    encrypted = AIMessage(content=[{"type": "reasoning", "encrypted_content": "Zm9v" * 4000}])
    assert message_tokens(signed) == message_tokens(plain)
    assert message_tokens(encrypted) < 100


def test_media_is_charged_flat_even_inside_a_tool_result() -> None:
    image = {"type": "image", "source": {"type": "base64", "data": "QUFB" * 5000}}
    nested = HumanMessage(content=[{"type": "tool_result", "tool_use_id": "x", "content": [image]}])
    audio = HumanMessage(content=[{"type": "input_audio", "input_audio": {"data": "QUFB" * 5000}}])
    assert 85 <= message_tokens(nested) < 120
    assert 85 <= message_tokens(audio) < 120


def test_model_input_with_a_long_thought_stays_within_the_budget() -> None:
    thought = {"type": "thinking", "thinking": THOUGHT * 10, "signature": "sig"}
    history = [
        SystemMessage("sys"),
        HumanMessage("Go on.", id="h1"),
        AIMessage(content=[thought, {"type": "text", "text": "Done."}], id="a1"),
    ]
    memory = WorkingMemory(ContextPolicy(max_input_tokens=1000, compact_at_tokens=None))
    sent = memory.model_input({"messages": history})
    assert count_message_tokens(sent) <= 1000 and all(m.id != "a1" for m in sent)
