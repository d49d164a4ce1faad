"""Summaries of older messages: through a chat model, or an extractive fallback.

The model path and the fallback share the prompt building and the result type; only the model
call differs between :func:`summarise` and :func:`asummarise`. When no model is configured, or the
call raises one of ``fallback_on`` (default: any ``Exception`` -- a provider outage must not stop
the agent), the deterministic extractive summary is returned instead and the error is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    get_buffer_string,
)

from engram.context._pins import SUMMARY_FLAG, normalise_key, split_sentences
from engram.context._trim import compaction_cut
from engram.tokens import TokenCounter, count_message_tokens, count_tokens

logger = logging.getLogger(__name__)

SUMMARY_PROMPT = """Summarise the conversation excerpt below for the assistant that continues it.
Keep: the user's goal, decisions taken and why, facts and figures found, open questions and next
steps. Be concise (at most {max_tokens} tokens). User constraints, approvals, completed actions
and sources are stored separately and re-shown on every call: you need not repeat them, and
nothing you write can revoke them. Answer with the summary only.

<conversation>
{conversation}
</conversation>"""

_ROLE_PRIORITY = {"human": 0, "ai": 1, "summary": 0, "tool": 2}


@dataclass(frozen=True)
class Summary:
    """A summary text and how it was made (``model`` or ``extractive``)."""

    text: str
    method: Literal["model", "extractive"]
    error: str | None = None


def summary_prompt(
    messages: Sequence[BaseMessage],
    max_tokens: int,
    max_input_tokens: int = 12000,
    counter: TokenCounter | None = None,
) -> list[BaseMessage]:
    """The summariser's prompt; a history over ``max_input_tokens`` is shortened first.

    The earlier half of an over-long history enters as extractive notes, the recent half
    verbatim (cut on a unit boundary), so the summariser's own context is never exceeded.
    """
    messages = list(messages)
    notes = ""
    if count_message_tokens(messages, counter) > max_input_tokens:
        cut = compaction_cut(messages, max_input_tokens // 2, counter) or len(messages)
        early = extractive_summary(messages[:cut], max_input_tokens // 4, counter)
        notes, messages = f"Notes on the earliest part:\n{early}\n\n", messages[cut:]
    conversation = notes + get_buffer_string(messages)
    limit = max_input_tokens * 4  # characters: a last unit can still be one huge result
    if len(conversation) > limit:
        conversation = conversation[: limit // 2] + "\n[…]\n" + conversation[-limit // 2 :]
    return [HumanMessage(SUMMARY_PROMPT.format(max_tokens=max_tokens, conversation=conversation))]


def summarise(
    messages: Sequence[BaseMessage],
    model: BaseChatModel | None = None,
    *,
    max_tokens: int = 400,
    counter: TokenCounter | None = None,
    fallback_on: tuple[type[BaseException], ...] = (Exception,),
    omit: Collection[str] = (),
    max_input_tokens: int = 12000,
) -> Summary:
    """A summary of ``messages`` by ``model``, or the extractive fallback."""
    if model is None or not messages:
        return Summary(extractive_summary(messages, max_tokens, counter, omit), "extractive")
    try:
        reply = model.invoke(summary_prompt(messages, max_tokens, max_input_tokens, counter))
    except fallback_on as exc:
        return _fallback(messages, max_tokens, counter, exc, omit)
    return _checked(reply, messages, max_tokens, counter, omit)


async def asummarise(
    messages: Sequence[BaseMessage],
    model: BaseChatModel | None = None,
    *,
    max_tokens: int = 400,
    counter: TokenCounter | None = None,
    fallback_on: tuple[type[BaseException], ...] = (Exception,),
    omit: Collection[str] = (),
    max_input_tokens: int = 12000,
) -> Summary:
    """Async twin of :func:`summarise` (same prompt, same fallback)."""
    if model is None or not messages:
        return Summary(extractive_summary(messages, max_tokens, counter, omit), "extractive")
    try:
        reply = await model.ainvoke(summary_prompt(messages, max_tokens, max_input_tokens, counter))
    except fallback_on as exc:
        return _fallback(messages, max_tokens, counter, exc, omit)
    return _checked(reply, messages, max_tokens, counter, omit)


def _checked(
    reply: BaseMessage,
    messages: Sequence[BaseMessage],
    max_tokens: int,
    counter: TokenCounter | None,
    omit: Collection[str],
) -> Summary:
    text = reply.text.strip()
    if not text:
        return _fallback(messages, max_tokens, counter, ValueError("empty summary"), omit)
    return Summary(text, "model")


def _fallback(
    messages: Sequence[BaseMessage],
    max_tokens: int,
    counter: TokenCounter | None,
    exc: BaseException,
    omit: Collection[str],
) -> Summary:
    logger.warning("summary model failed (%s); using the extractive summary", exc)
    error = f"{type(exc).__name__}: {exc}"
    return Summary(extractive_summary(messages, max_tokens, counter, omit), "extractive", error)


def extractive_summary(
    messages: Sequence[BaseMessage],
    max_tokens: int = 400,
    counter: TokenCounter | None = None,
    omit: Collection[str] = (),
) -> str:
    """Deterministic summary: the lead sentence of each message, highest priority first.

    Earlier summaries and user turns come first, then assistant turns, then tool results; lines
    that fit ``max_tokens`` are kept and printed in their original order. Sentences whose
    :func:`normalise_key` is in ``omit`` (pinned elsewhere) are left out.
    """
    lines = [_line(message, omit) for message in messages]
    ranked = sorted(
        (i for i, line in enumerate(lines) if line is not None),
        key=lambda i: (_ROLE_PRIORITY[_role(messages[i])], -i),
    )
    room, chosen = max_tokens, set()
    for index in ranked:
        line = lines[index]
        assert line is not None
        cost = count_tokens(line, counter) + 1
        if cost <= room:
            room -= cost
            chosen.add(index)
    kept = [line for i, line in enumerate(lines) if i in chosen and line is not None]
    return "\n".join(kept)


def _role(message: BaseMessage) -> str:
    if message.additional_kwargs.get(SUMMARY_FLAG):
        return "summary"
    if isinstance(message, HumanMessage):
        return "human"
    if isinstance(message, ToolMessage):
        return "tool"
    return "ai"


def _line(message: BaseMessage, omit: Collection[str]) -> str | None:
    if isinstance(message, SystemMessage):
        return None
    if message.additional_kwargs.get(SUMMARY_FLAG):
        return message.text.split("\n", 1)[-1].strip() or None
    text = _lead(_without(message.text, omit))
    if isinstance(message, ToolMessage):
        return f"- tool {message.name or 'result'}: {text}" if text else None
    if isinstance(message, AIMessage) and message.tool_calls:
        names = ", ".join(call["name"] for call in message.tool_calls)
        return f"- assistant called {names}" + (f": {text}" if text else "")
    speaker = "user" if isinstance(message, HumanMessage) else "assistant"
    return f"- {speaker}: {text}" if text else None


def _without(text: str, omit: Collection[str]) -> str:
    if not omit:
        return text
    return " ".join(s for s in split_sentences(text) if normalise_key(s) not in omit)


def _lead(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    for end in (". ", "? ", "! ", "\n"):
        cut = flat.find(end)
        if 0 < cut < limit:
            return flat[: cut + 1]
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
