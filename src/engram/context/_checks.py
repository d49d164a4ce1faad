"""Argument checks shared by working memory's entry points.

Working memory is called with whatever a harness holds (graph state, request objects, config
read from files), so a wrong shape must fail at the door with :class:`InvalidInputError` naming
the argument, not deep inside with an ``AttributeError`` or -- worse for a NaN budget -- not at
all.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from engram.errors import InvalidInputError


def check_count(name: str, value: Any, minimum: int = 0) -> int:
    """``value`` as an ``int`` of at least ``minimum``: no bool, str, float, NaN or infinity."""
    if isinstance(value, bool):
        raise InvalidInputError(f"{name} must be an integer, got a bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise InvalidInputError(
            f"{name} must be an integer, got {type(value).__name__} {value!r}"
        ) from None
    if number < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {number}")
    return number


def check_messages(messages: Any, name: str = "messages") -> list[BaseMessage]:
    """``messages`` as a list, refused unless it is a sequence of chat messages."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise InvalidInputError(
            f"{name} must be a list of chat messages, got {type(messages).__name__}"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            raise InvalidInputError(
                f"{name}[{index}] is a {type(message).__name__}, not a chat message "
                "(a langchain_core BaseMessage such as HumanMessage)"
            )
    return list(messages)


def check_names(name: str, value: Any) -> tuple[str, ...]:
    """A collection of names (tool names), refused when it is one bare string."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | frozenset | set):
        raise InvalidInputError(f"{name} must be a tuple of names, got {type(value).__name__}")
    if not all(isinstance(item, str) for item in value):
        raise InvalidInputError(f"{name} must hold only str names")
    return tuple(value)
