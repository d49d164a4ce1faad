"""Trimming by token budget and selective deletion of old tool results.

Both work on *units*: an ``AIMessage`` that calls tools together with the ``ToolMessage`` results
answering those calls is one unit, every other message is a unit of its own. A unit is kept or
dropped whole, so a tool call is never separated from its results. A unit whose calls lack a
result, and a ``ToolMessage`` answering no call in the list, are dropped (providers reject both).
The one message never dropped is the user's current request (:mod:`engram.context._current`):
when it alone is over the budget it is cut, visibly, instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engram.context._checks import check_count, check_messages, check_names
from engram.context._current import MIN_KEPT_CHARS, Unit, current_index, fit_message, shortest
from engram.context._pins import CLEARED_FLAG as CLEARED
from engram.errors import InvalidInputError
from engram.tokens import TokenCounter, count_message_tokens, message_tokens


def split_system(messages: Sequence[BaseMessage]) -> tuple[SystemMessage | None, list[BaseMessage]]:
    """The leading system message (if any) and the rest."""
    if messages and isinstance(messages[0], SystemMessage):
        return messages[0], list(messages[1:])
    return None, list(messages)


def group_units(messages: Sequence[BaseMessage]) -> list[Unit]:
    """Messages grouped into keep-or-drop units; orphan and incomplete tool parts are dropped."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    used: set[str] = set()
    units: list[Unit] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            continue  # placed right after the call that asked for it
        ids = _call_ids(message)
        if not ids:
            units.append([message])
        elif all(i in results and i not in used for i in ids):
            used.update(ids)
            units.append([message, *(results[i] for i in ids)])
    return units


def _call_ids(message: BaseMessage) -> list[str]:
    if not isinstance(message, AIMessage):
        return []
    return [str(call.get("id")) for call in message.tool_calls]


def is_well_paired(messages: Sequence[BaseMessage]) -> bool:
    """True when every tool call is directly followed by all its results and no result is orphan."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if isinstance(message, ToolMessage):
            return False
        ids = _call_ids(message)
        answered = messages[index + 1 : index + 1 + len(ids)]
        if ids and sorted(ids) != sorted(
            m.tool_call_id for m in answered if isinstance(m, ToolMessage)
        ):
            return False
        index += 1 + len(ids)
    return True


def trim_to_budget(
    messages: Sequence[BaseMessage],
    max_tokens: int,
    *,
    counter: TokenCounter | None = None,
    reserved_tokens: int = 0,
    start_on_human: bool = True,
) -> list[BaseMessage]:
    """The most recent whole units that fit ``max_tokens``, after the leading system message.

    ``reserved_tokens`` are held back for text added later (a pinned block). With
    ``start_on_human`` the kept history starts at a human message when one is kept.

    The user's current message (the last human message, followed by nothing but tool rounds)
    is always kept: when it does not fit, older tool rounds of its turn make way and it is cut
    in the middle with a visible marker. Raises :class:`InvalidInputError` if the system
    message alone exceeds the budget, or the current message cannot fit even cut.
    """
    messages = check_messages(messages)
    max_tokens = check_count("max_tokens", max_tokens)
    reserved_tokens = check_count("reserved_tokens", reserved_tokens)
    system, rest = split_system(messages)
    head = [system] if system is not None else []
    system_tokens = count_message_tokens(head, counter)
    room = max_tokens - reserved_tokens - system_tokens
    if room < 0:
        raise InvalidInputError(_no_room(max_tokens, system_tokens, reserved_tokens))
    units = group_units(rest)
    kept = _recent(units, room, counter)
    current = current_index(units)
    if current is not None and len(kept) < len(units) - current:
        kept = _with_current(units, current, kept, room, counter)
    if start_on_human:
        kept = _start_on_human(kept)
    return head + [message for unit in kept for message in unit]


def _no_room(max_tokens: int, system_tokens: int, reserved: int) -> str:
    taken = [f"the system prompt ({system_tokens} tokens)"] if system_tokens else []
    taken += [f"reserved_tokens ({reserved})"] if reserved else []
    return f"budget of {max_tokens} tokens is smaller than {' plus '.join(taken)}"


def _recent(units: Sequence[Unit], room: int, counter: TokenCounter | None) -> list[Unit]:
    """The longest run of the most recent ``units`` whose total fits ``room``."""
    kept: list[Unit] = []
    for unit in reversed(units):
        cost = count_message_tokens(unit, counter)
        if cost > room:
            break
        room -= cost
        kept.append(unit)
    kept.reverse()
    return kept


def _with_current(
    units: Sequence[Unit], index: int, newer: list[Unit], room: int, counter: TokenCounter | None
) -> list[Unit]:
    """The current request (cut if need be) with as many of the newest rounds after it as fit
    beside it, then whatever older units still fit; ``newer`` is what fitted without it."""
    message = units[index][0]
    floor = message_tokens(shortest(message), counter)
    while newer and count_message_tokens(_flat(newer), counter) + floor > room:
        newer = newer[1:]  # the oldest tool round of this turn makes way first
    left = room - count_message_tokens(_flat(newer), counter)
    fitted = fit_message(message, left, counter)
    if fitted is None:
        raise InvalidInputError(_too_long(message, floor, room, counter))
    older = _recent(units[:index], left - message_tokens(fitted, counter), counter)
    return [*older, [fitted], *newer]


def _flat(units: Sequence[Unit]) -> list[BaseMessage]:
    return [message for unit in units for message in unit]


def _too_long(message: BaseMessage, floor: int, room: int, counter: TokenCounter | None) -> str:
    return (
        f"the current user message ({message.id or 'no id'}, "
        f"{message_tokens(message, counter)} tokens) cannot fit: the budget leaves {room} "
        "tokens beside the system prompt and pinned state, and even cut to its first and last "
        f"{MIN_KEPT_CHARS // 2} characters it needs {floor}; raise the budget "
        "(max_input_tokens), or shorten the system prompt or the pins"
    )


def _start_on_human(units: list[Unit]) -> list[Unit]:
    for index, unit in enumerate(units):
        if isinstance(unit[0], HumanMessage):
            return units[index:]
    return units


def clear_tool_results(
    messages: Sequence[BaseMessage],
    *,
    keep_last: int = 3,
    min_tokens: int = 50,
    exclude_tools: Sequence[str] = (),
    counter: TokenCounter | None = None,
) -> list[BaseMessage]:
    """Replace old, large tool results by a short stub; pairing (``tool_call_id``) stays valid.

    The ``keep_last`` most recent tool results, results under ``min_tokens`` and results of
    ``exclude_tools`` are kept verbatim. Returns a new list; the input messages are not modified.
    """
    messages = check_messages(messages)
    keep_last = check_count("keep_last", keep_last)
    min_tokens = check_count("min_tokens", min_tokens)
    exclude_tools = check_names("exclude_tools", exclude_tools)
    tool_positions = [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
    old = set(tool_positions[: max(0, len(tool_positions) - keep_last)])
    out = list(messages)
    for index in old:
        message = out[index]
        assert isinstance(message, ToolMessage)
        if message.name in exclude_tools or message.additional_kwargs.get(CLEARED):
            continue
        size = message_tokens(message, counter)
        if size >= min_tokens:
            out[index] = stub_tool_result(message, size)
    return out


def stub_tool_result(message: ToolMessage, size: int) -> ToolMessage:
    """A copy of ``message`` whose content is a one-line stub naming what was removed."""
    name = message.name or "tool"
    stub = f"[{name} result cleared to save context: {size} tokens; call the tool again if needed]"
    kwargs = {**message.additional_kwargs, CLEARED: True}
    return message.model_copy(update={"content": stub, "additional_kwargs": kwargs})


def compaction_cut(
    messages: Sequence[BaseMessage], keep_tokens: int, counter: TokenCounter | None = None
) -> int:
    """Index into ``messages`` (no system message) where the kept recent part starts.

    The cut falls on a unit boundary (never on a ``ToolMessage``), keeps at most ``keep_tokens``
    and always keeps the last unit; 0 means there is nothing to summarise.
    """
    boundaries = [i for i, m in enumerate(messages) if not isinstance(m, ToolMessage)]
    if not boundaries:
        return 0
    cut, size = boundaries[-1], count_message_tokens(messages[boundaries[-1] :], counter)
    for start in reversed(boundaries[:-1]):
        size += count_message_tokens(messages[start:cut], counter)
        if size > keep_tokens:
            break
        cut = start
    return cut
