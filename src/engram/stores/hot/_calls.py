"""What a saver call may be given, checked by the guard (:mod:`.owned`) before the LangGraph
saver sees it, so every backend refuses the same calls the same way: ``InvalidInputError``,
never a driver's ``UnicodeEncodeError``, a ``KeyError`` or an SQL error, and nothing stored.

An id (thread, checkpoint, namespace, task, task path, channel) is valid Unicode without a
control character; a list's ``filter`` is JSON every backend can match; ``limit`` a count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, get_checkpoint_metadata

from engram import _validate as check
from engram.errors import InvalidInputError
from engram.stores.hot.contract import valid_thread_id


def _id(name: str, value: object, *, blank: bool = False) -> str:
    return check.text(name, value, blank=blank, line=True)


def _configurable(config: RunnableConfig | None) -> Mapping[str, Any]:
    found = (config or {}).get("configurable", {})
    if not isinstance(found, Mapping):
        raise InvalidInputError(f"a config's configurable must be a mapping, got {found!r}")
    return found


def checked_config(
    config: RunnableConfig | None, *, thread: bool = True, checkpoint: bool = False
) -> str | None:
    """The thread id ``config`` names (required when ``thread``; a ``checkpoint_id`` too
    when ``checkpoint``), after checking its thread id, namespace and checkpoint id."""
    conf = _configurable(config)
    thread_id = conf.get("thread_id")
    if thread_id is None and thread:
        raise InvalidInputError("a saver call needs the thread_id of its config")
    if conf.get("checkpoint_ns") is not None:
        _id("checkpoint_ns", conf["checkpoint_ns"], blank=True)
    if conf.get("checkpoint_id") is not None or checkpoint:
        _id("checkpoint_id", conf.get("checkpoint_id"), blank=not checkpoint)
    return None if thread_id is None else valid_thread_id(thread_id)


def checked_limit(limit: object) -> int | None:
    """``None`` (no limit) or a count (``0``: nothing)."""
    return None if limit is None else check.integer("limit", limit, minimum=0)


def checked_list(
    config: RunnableConfig | None,
    filter: object,
    before: RunnableConfig | None,
    limit: object,
) -> str | None:
    """Check a ``list`` call; the thread it names (``None``: every thread, for a call
    given no config: one naming no thread is refused, as by LangGraph's SQLite and
    in-memory savers, so a listing acting for a principal is always of one thread)."""
    thread_id = checked_config(config, thread=config is not None)
    if before is not None:
        checked_config(before, thread=False)
    for key, value in (check.mapping("filter", filter) or {}).items():
        _id("filter key", key)
        check.storable(f"filter[{key!r}]", value)
    checked_limit(limit)
    return thread_id


def checked_put(
    config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
) -> None:
    checked_config(config)
    _id("checkpoint id", checkpoint.get("id"))
    _metadata_texts("metadata", get_checkpoint_metadata(config, metadata))  # (as stored)


def _metadata_texts(name: str, value: object, depth: int = 0) -> None:
    """Every string of the metadata a checkpoint is stored with (its own, and the
    config's ``metadata`` and ``configurable`` LangGraph adds), keys included, is one each
    backend stores: PostgreSQL's JSONB holds no NUL or lone surrogate, SQLite keeps both
    (LangGraph strips NUL from top-level values only). Values that are not JSON are the
    serializer's to refuse."""
    if depth > 64:
        raise InvalidInputError(f"{name} nests deeper than 64 levels")
    if isinstance(value, str):
        check.stored_text(name, value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                check.stored_text(f"{name} key", key)
            _metadata_texts(f"{name}[{key!r}]", item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _metadata_texts(name, item, depth + 1)


def checked_writes(
    config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: object, task_path: object
) -> None:
    """Check a ``put_writes`` call: its config names the checkpoint the writes belong to."""
    checked_config(config, checkpoint=True)
    _id("task_id", task_id)
    _id("task_path", task_path, blank=True)
    for channel, _ in writes:
        _id("channel", channel)
