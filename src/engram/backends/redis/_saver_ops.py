"""What the Redis saver does, as command generators shared by its sync and async halves.

A generator yields ``(command, args, fetch)``: a Redis command and its arguments,
``MULTI`` / ``PIPE`` with a tuple of commands (one transaction, or one round trip),
or ``EVAL`` with ``(script, args)`` naming one of :data:`~._keys.SCRIPTS`; it gets the
reply back. :mod:`.hot` runs them on a sync or an async client.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from engram.backends.redis._keys import (
    CHECKPOINT,
    METADATA,
    METATYPE,
    PARENT,
    THREADS,
    TYPE,
    ThreadKeys,
    decode,
    encode,
    pack_write,
    text_of,
    unpack_writes,
    write_field,
)

Command = tuple[Any, ...]
R = TypeVar("R")
Commands = Generator[tuple[str, Any, bool], Any, R]
Found = tuple[str, str, str]  # checkpoint id, thread id, namespace

CHUNK = 128
"""Checkpoint records read per round trip when listing."""


def multi(*commands: Command) -> tuple[str, tuple[Command, ...], bool]:
    return "MULTI", commands, True


def pipe(commands: Iterable[Command]) -> tuple[str, tuple[Command, ...], bool]:
    return "PIPE", tuple(commands), True


def script(name: str, *args: Any) -> tuple[str, tuple[str, tuple[Any, ...]], bool]:
    return "EVAL", (name, args), True


def touch(keys: ThreadKeys, ttl: int | None) -> Commands[None]:
    """Every key of the thread expires ``ttl`` seconds from now (no TTL: nothing)."""
    if ttl:
        yield script("touch", keys.base, ttl)


def next_version(current: str | int | None) -> str:
    """LangGraph's SQLite version scheme: a zero-padded counter and a random tie-break."""
    if current is None:
        number = 0
    elif isinstance(current, int):
        number = current
    else:
        number = int(current.split(".")[0])
    return f"{number + 1:032}.{random.random():016}"


# --- writing ----------------------------------------------------------------------


def put(
    serde: SerializerProtocol,
    ttl: int | None,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
) -> Commands[RunnableConfig]:
    """Store one checkpoint (replacing one of the same id) in one transaction."""
    conf = config["configurable"]
    thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
    keys, cid = ThreadKeys(thread_id), checkpoint["id"]
    kind, blob = serde.dumps_typed(checkpoint)
    meta_kind, meta = serde.dumps_typed(get_checkpoint_metadata(config, metadata))
    record = keys.checkpoint(ns, cid)
    fields = (TYPE, kind, CHECKPOINT, blob, METATYPE, meta_kind, METADATA, meta)
    parent = conf.get("checkpoint_id") or ""
    yield multi(
        ("HSET", record, *fields, PARENT, parent),
        ("ZADD", keys.ids(ns), 0, cid),
        ("SADD", keys.namespaces, encode(ns)),
        ("SADD", keys.keys, record, keys.ids(ns), keys.namespaces),
        ("SADD", THREADS, thread_id),
    )
    yield from touch(keys, ttl)
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}


def put_writes(
    serde: SerializerProtocol,
    ttl: int | None,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Commands[None]:
    """Store a task's writes on a checkpoint: LangGraph's special writes (errors,
    interrupts...) replace what is stored, the others keep a write already stored."""
    conf = config["configurable"]
    keys = ThreadKeys(str(conf["thread_id"]))
    record = keys.checkpoint(str(conf.get("checkpoint_ns", "")), str(conf["checkpoint_id"]))
    replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)
    commands: list[Command] = []
    for idx, (channel, value) in enumerate(writes):
        field = write_field(task_id, WRITES_IDX_MAP.get(channel, idx))
        packed = pack_write(task_path, channel, serde.dumps_typed(value))
        commands.append(("HSET" if replace else "HSETNX", record, field, packed))
    if commands:
        yield multi(*commands, ("SADD", keys.keys, record))
        yield from touch(keys, ttl)


def drop_thread(thread_id: str) -> Commands[int]:
    """Delete every key of a thread, its owner record and its index entries (atomic)."""
    keys = ThreadKeys(thread_id)
    return int((yield script("drop", keys.base, thread_id, THREADS)))


# --- reading --------------------------------------------------------------------


def _tuple(serde: SerializerProtocol, found: Found, record: dict[bytes, bytes]) -> CheckpointTuple:
    cid, thread_id, ns = found
    parent = text_of(record.get(PARENT, b""))

    def at(checkpoint_id: str) -> RunnableConfig:
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }

    return CheckpointTuple(
        at(cid),
        serde.loads_typed((text_of(record[TYPE]), record[CHECKPOINT])),
        load_metadata(serde, record),
        at(parent) if parent else None,
        unpack_writes(record, serde),
    )


def load_metadata(serde: SerializerProtocol, record: Mapping[bytes, bytes]) -> CheckpointMetadata:
    return cast(
        CheckpointMetadata, serde.loads_typed((text_of(record[METATYPE]), record[METADATA]))
    )


def get_tuple(
    serde: SerializerProtocol, config: RunnableConfig
) -> Commands[CheckpointTuple | None]:
    conf = config["configurable"]
    thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
    keys, cid = ThreadKeys(thread_id), get_checkpoint_id(config)
    if not cid:
        newest = yield "ZRANGE", (keys.ids(ns), -1, -1), True
        if not newest:
            return None
        cid = text_of(newest[0])
    record = yield "HGETALL", (keys.checkpoint(ns, cid),), True
    return _tuple(serde, (cid, thread_id, ns), record) if CHECKPOINT in record else None


def _namespaces(config: RunnableConfig | None) -> Commands[list[tuple[str, str]]]:
    """(thread, namespace) pairs a listing covers."""
    if config is None:
        threads = sorted(text_of(t) for t in (yield "SMEMBERS", (THREADS,), True))
    else:
        threads = [str(config["configurable"]["thread_id"])]
    ns = None if config is None else config["configurable"].get("checkpoint_ns")
    if ns is not None:
        return [(t, str(ns)) for t in threads]
    found = yield pipe(("SMEMBERS", ThreadKeys(t).namespaces) for t in threads)
    return [(t, decode(n)) for t, names in zip(threads, found, strict=True) for n in names]


def _candidates(
    config: RunnableConfig | None, before: RunnableConfig | None
) -> Commands[list[Found]]:
    """Checkpoints a listing may return, newest id first."""
    pairs = yield from _namespaces(config)
    wanted = get_checkpoint_id(config) if config else None
    bound = get_checkpoint_id(before) if before else None
    upper = f"({bound}" if bound else "+"
    ids = yield pipe(("ZRANGEBYLEX", ThreadKeys(t).ids(ns), "-", upper) for t, ns in pairs)
    found = [
        (text_of(cid), t, ns) for (t, ns), cids in zip(pairs, ids, strict=True) for cid in cids
    ]
    return sorted((f for f in found if wanted is None or f[0] == wanted), reverse=True)


def matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    return all(metadata.get(k) == v for k, v in (wanted or {}).items())


def list_tuples(
    serde: SerializerProtocol,
    config: RunnableConfig | None,
    filter: Mapping[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Commands[list[CheckpointTuple]]:
    """LangGraph's ``list``: newest first, metadata filter applied after decoding."""
    candidates = yield from _candidates(config, before)
    result: list[CheckpointTuple] = []
    for start in range(0, len(candidates), CHUNK):
        if limit is not None and len(result) >= limit:
            break
        chunk = candidates[start : start + CHUNK]
        records = yield pipe(("HGETALL", ThreadKeys(t).checkpoint(ns, c)) for c, t, ns in chunk)
        for found, record in zip(chunk, records, strict=True):
            if CHECKPOINT in record and matches(load_metadata(serde, record), filter):
                result.append(_tuple(serde, found, record))
    return result if limit is None else result[: max(limit, 0)]
