"""The user's current message: the one request a trim may never drop.

The current message is the last human message still being worked on: only tool rounds (a
tool-calling ``AIMessage`` with its results) follow it. A model called without it answers a
question nobody asked, so when it does not fit the budget it is cut in the middle -- its
opening (usually the instruction) and its end (usually the question) kept, with a visible
marker saying how much was removed -- and when even that cannot fit, the caller gets an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from engram.context._pins import SUMMARY_FLAG
from engram.tokens import TokenCounter, message_tokens

Unit = list[BaseMessage]

MIN_KEPT_CHARS = 200
"""A cut keeps at least this many characters of the message (half from each end); less would
leave the model a marker instead of a request."""
_MARKER = (
    "\n[… {removed} characters cut from the middle of this message to fit the context budget …]\n"
)
# A token rarely spans more characters: bounds the search for a cut (past it, a cut keeps a
# little less than would fit, never more).
_CHARS_PER_TOKEN_BOUND = 32


def current_index(units: Sequence[Unit]) -> int | None:
    """Index of the unit holding the current user message, None when no request is in flight."""
    for index in range(len(units) - 1, -1, -1):
        first = units[index][0]
        if isinstance(first, HumanMessage) and not first.additional_kwargs.get(SUMMARY_FLAG):
            return index
        if not (isinstance(first, AIMessage) and first.tool_calls):
            return None  # an answer (or a summary) came after it: nothing is in flight
    return None


def shortest(message: BaseMessage) -> BaseMessage:
    """``message`` cut as far as a cut may go (itself when its text is already that short)."""
    text = message.text
    return message if len(text) <= MIN_KEPT_CHARS else cut(message, text, MIN_KEPT_CHARS)


def fit_message(
    message: BaseMessage, room: int, counter: TokenCounter | None = None
) -> BaseMessage | None:
    """``message`` if it fits ``room`` tokens, else the longest middle cut that fits, else None."""
    if message_tokens(message, counter) <= room:
        return message
    text = message.text
    low, high = MIN_KEPT_CHARS, min(len(text) - 1, room * _CHARS_PER_TOKEN_BOUND)
    best = None
    while low <= high:  # the cost grows with the characters kept: binary search on them
        keep = (low + high) // 2
        candidate = cut(message, text, keep)
        if message_tokens(candidate, counter) <= room:
            best, low = candidate, keep + 1
        else:
            high = keep - 1
    return best


def cut(message: BaseMessage, text: str, keep: int) -> BaseMessage:
    """A copy of ``message`` keeping the first and last ``keep / 2`` characters of ``text``.

    Non-text blocks (images, audio) stay: only the words are cut, and the marker says so.
    """
    head, tail = text[: (keep + 1) // 2], text[len(text) - keep // 2 :]
    short = head + _MARKER.format(removed=len(text) - keep) + tail
    if isinstance(message.content, str):
        return message.model_copy(update={"content": short})
    media = [b for b in message.content if isinstance(b, dict) and b.get("type") != "text"]
    return message.model_copy(update={"content": [{"type": "text", "text": short}, *media]})
