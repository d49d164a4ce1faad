"""Owners, listing, sizes, retention, copies and erasure of the Redis hot tier, as command
generators (see :mod:`._saver_ops` for their form)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from engram._principal import Principal
from engram.backends.redis._keys import (
    CHECKPOINT,
    METADATA,
    METATYPE,
    PARENT,
    REPARENT_LUA,
    THREADS,
    ThreadKeys,
    count_writes,
    decode,
    encode,
    text_of,
    user_index,
)
from engram.backends.redis._saver_ops import (
    Command,
    Commands,
    drop_thread,
    load_metadata,
    multi,
    pipe,
    script,
    touch,
)
from engram.errors import ConflictError
from engram.stores.hot.contract import (
    PruneReport,
    ThreadInfo,
    ThreadSize,
    is_stale_call,
    prune_targets,
    run_ids_of,
)

_DELTA_KEY = "counters_since_delta_snapshot"


def _principal(reply: Sequence[Any]) -> Principal | None:
    tenant, user = reply
    return None if tenant is None or user is None else Principal(text_of(tenant), text_of(user))


def owner(thread_id: str) -> Commands[Principal | None]:
    return _principal((yield "HMGET", (ThreadKeys(thread_id).owner, "tenant", "user"), True))


def claim(
    thread_id: str, principal: Principal, ttl: int | None = None, *, stored: bool = False
) -> Commands[Principal | None]:
    """Record ``principal`` as the owner unless the thread has one (one atomic script);
    with ``stored``, only if the thread holds a key (see ``HotAdmin.settle``)."""
    keys = ThreadKeys(thread_id)
    found = yield script(
        "claim", keys.owner, *principal.namespace, user_index(principal), thread_id, THREADS,
        ttl or 0, keys.keys if stored else "",
    )  # fmt: skip
    return _principal(found)


def _threads_of(owner: Principal | None) -> Commands[list[str]]:
    index = THREADS if owner is None else user_index(owner)
    return sorted(text_of(t) for t in (yield "SMEMBERS", (index,), True))


def _forget_gone(thread_ids: list[str], owner: Principal | None) -> Commands[None]:
    """Drop index entries of threads that expired (their keys and owner are gone)."""
    if not thread_ids:
        return
    alive = yield pipe(("EXISTS", ThreadKeys(t).keys, ThreadKeys(t).owner) for t in thread_ids)
    gone = [t for t, n in zip(thread_ids, alive, strict=True) if not n]
    if gone:
        index = THREADS if owner is None else user_index(owner)
        yield multi(("SREM", index, *gone), *(("SREM", THREADS, t) for t in gone))


def list_threads(owner: Principal | None) -> Commands[list[ThreadInfo]]:
    """Threads with a root-namespace checkpoint (``owner``'s only, when given), newest first."""
    ids = yield from _threads_of(owner)
    commands: list[Command] = []
    for t in ids:
        keys = ThreadKeys(t)
        commands += [("ZCARD", keys.ids("")), ("ZRANGE", keys.ids(""), -1, -1)]
        commands.append(("HMGET", keys.owner, "tenant", "user"))
    replies = yield pipe(commands)
    found, empty = [], []
    for i, thread_id in enumerate(ids):
        count, newest, recorded = replies[3 * i : 3 * i + 3]
        who = _principal(recorded)
        if not count:
            empty.append(thread_id)
        elif owner is None or who == owner:
            tenant, user = who.namespace if who else (None, None)
            found.append(ThreadInfo(thread_id, tenant, user, count, text_of(newest[0])))
    yield from _forget_gone(empty, owner)
    return sorted(found, key=lambda info: info.last_checkpoint_id, reverse=True)


def _records(thread_id: str) -> Commands[dict[str, dict[bytes, bytes]]]:
    """Every checkpoint record of a thread: ``{key: fields}``."""
    keys = ThreadKeys(thread_id)
    members = sorted(text_of(k) for k in (yield "SMEMBERS", (keys.keys,), True))
    names = [k for k in members if k.startswith(keys.base + ":c:")]
    records = yield pipe(("HGETALL", k) for k in names)
    return dict(zip(names, records, strict=True))


def _size(thread_id: str, records: dict[str, dict[bytes, bytes]]) -> ThreadSize | None:
    saved = [r for r in records.values() if CHECKPOINT in r]
    if not saved:
        return None
    writes = [count_writes(r) for r in records.values()]
    return ThreadSize(
        thread_id,
        checkpoints=len(saved),
        writes=sum(n for n, _ in writes),
        blobs=0,
        checkpoint_bytes=sum(len(r[CHECKPOINT]) + len(r[METADATA]) for r in saved),
        write_bytes=sum(b for _, b in writes),
        blob_bytes=0,
    )


def sizes(thread_ids: Sequence[str] | None, owner: Principal | None) -> Commands[list[ThreadSize]]:
    ids = list(thread_ids) if thread_ids is not None else (yield from _threads_of(None))
    if owner is not None:  # (the threads the owner record names: an index entry may be
        # stale, its id expired and taken by another since)
        owned = {t.thread_id for t in (yield from list_threads(owner))}
        ids = [t for t in ids if t in owned]
    found = []
    for thread_id in sorted(set(ids)):
        size = _size(thread_id, (yield from _records(thread_id)))
        if size is not None:
            found.append(size)
    return found


# --- retention ----------------------------------------------------------------------


def _namespaces(keys: ThreadKeys) -> Commands[dict[str, list[str]]]:
    names = yield "SMEMBERS", (keys.namespaces,), True
    spaces = sorted(decode(n) for n in names)
    ids = yield pipe(("ZRANGE", keys.ids(ns), 0, -1) for ns in spaces)
    return {
        ns: sorted((text_of(c) for c in cids), reverse=True)
        for ns, cids in zip(spaces, ids, strict=True)
    }


def _heads(
    keys: ThreadKeys, spaces: dict[str, list[str]]
) -> Commands[dict[tuple[str, str], tuple[Any, ...]]]:
    """``{(ns, id): (metadata kind, metadata, parent, field count)}`` of every checkpoint."""
    pairs = [(ns, cid) for ns, cids in spaces.items() for cid in cids]
    commands: list[Command] = []
    for ns, cid in pairs:
        commands.append(("HMGET", keys.checkpoint(ns, cid), METATYPE, METADATA, PARENT))
        commands.append(("HLEN", keys.checkpoint(ns, cid)))
    replies = yield pipe(commands)
    return {pair: (*replies[2 * i], replies[2 * i + 1]) for i, pair in enumerate(pairs)}


def _metadata(serde: SerializerProtocol, head: tuple[Any, ...]) -> dict[str, Any]:
    if head[0] is None:
        return {}
    return dict(load_metadata(serde, {METATYPE: head[0], METADATA: head[1]}))


def prune(serde: SerializerProtocol, thread_id: str, keep_last: int) -> Commands[PruneReport]:
    """Keep the newest ``keep_last`` checkpoints of each namespace, with their writes;
    subgraph call namespaces whose root checkpoint goes are deleted whole."""
    keys = ThreadKeys(thread_id)
    spaces = yield from _namespaces(keys)
    heads = yield from _heads(keys, spaces)
    meta = {pair: _metadata(serde, head) for pair, head in heads.items()}
    if any(_DELTA_KEY in m for m in meta.values()):
        raise ConflictError(f"thread {thread_id!r} uses a DeltaChannel; pruning would lose state")
    commands: list[Command] = []
    deleted = writes = kept = 0
    root_cutoff: str | None = None
    for ns, newest in spaces.items():
        root = meta[(ns, newest[0])].get("parents", {}).get("") if ns and newest else None
        keep = 0 if is_stale_call(ns, root, root_cutoff) else keep_last
        if not ns and len(newest) > keep:
            root_cutoff = newest[keep - 1]
        doomed, survivors = newest[keep:], newest[:keep]
        commands += _prune_namespace(keys, ns, doomed, survivors, heads)
        deleted += len(doomed)
        writes += sum(heads[(ns, c)][3] - 5 for c in doomed if heads[(ns, c)][0] is not None)
        kept += len(survivors)
    if commands:
        yield multi(*commands)
    return PruneReport(thread_id, kept, deleted, writes)


def _prune_namespace(
    keys: ThreadKeys,
    ns: str,
    doomed: list[str],
    survivors: list[str],
    heads: dict[tuple[str, str], tuple[Any, ...]],
) -> list[Command]:
    if not doomed:
        return []
    records = [keys.checkpoint(ns, c) for c in doomed]
    commands: list[Command] = [("DEL", *records), ("SREM", keys.keys, *records)]
    if survivors:
        commands.append(("ZREM", keys.ids(ns), *doomed))
    else:
        commands += [("DEL", keys.ids(ns)), ("SREM", keys.namespaces, encode(ns))]
        commands.append(("SREM", keys.keys, keys.ids(ns)))
    return commands + _orphaned(keys, ns, set(doomed), survivors, heads)


def _orphaned(
    keys: ThreadKeys,
    ns: str,
    gone: set[str],
    survivors: Sequence[str],
    heads: dict[tuple[str, str], tuple[Any, ...]],
) -> list[Command]:
    """A kept checkpoint whose parent is gone becomes a root, unless the record itself
    went meanwhile (an erasure): an ``HSET`` would recreate it, a key nothing tracks."""
    return [
        ("EVAL", REPARENT_LUA, 1, keys.checkpoint(ns, cid))
        for cid in survivors
        if (parent := heads[(ns, cid)][2]) and text_of(parent) in gone
    ]


def delete_threads(owner: Principal) -> Commands[list[str]]:
    """Delete every thread of ``owner``, whole; their ids: the ones :func:`list_threads`
    finds, newest first, then any holding no checkpoint (pending writes only)."""
    found = [t.thread_id for t in (yield from list_threads(owner))]
    rest = [t for t in (yield from _threads_of(owner)) if t not in found]
    recorded = (
        (yield pipe(("HMGET", ThreadKeys(t).owner, "tenant", "user") for t in rest)) if rest else []
    )
    found += [t for t, r in zip(rest, recorded, strict=True) if _principal(r) == owner]
    for thread_id in found:
        yield from drop_thread(thread_id)
    yield multi(("DEL", user_index(owner)))  # (what is left in it names others' threads)
    return found


def prune_threads(
    serde: SerializerProtocol, thread_ids: Sequence[str], strategy: str
) -> Commands[None]:
    """LangGraph's ``prune``: ``keep_latest`` is :func:`prune` with N = 1."""
    for thread_id in prune_targets(thread_ids, strategy):
        if strategy == "delete":
            yield from drop_thread(thread_id)
        else:
            yield from prune(serde, thread_id, 1)


def copy_thread(source: str, target: str, ttl: int | None) -> Commands[None]:
    """Copy every checkpoint, write and namespace of ``source`` to ``target`` (merging into
    what ``target`` holds); ``target`` gets ``source``'s owner unless it has one. A thread
    copied onto itself is left as it is."""
    if source == target:
        return
    src, dst = ThreadKeys(source), ThreadKeys(target)
    members = sorted(text_of(k) for k in (yield "SMEMBERS", (src.keys,), True))
    commands: list[Command] = []
    for key in members:
        mapped = dst.base + key[len(src.base) :]
        if key.startswith(src.base + ":c:"):
            commands.append(("COPY", key, mapped, "REPLACE"))
        elif key.startswith(src.base + ":z:"):
            commands.append(("ZUNIONSTORE", mapped, 2, mapped, key))
        else:
            commands.append(("SUNIONSTORE", mapped, mapped, key))
        commands.append(("SADD", dst.keys, mapped))
    if commands:
        yield multi(*commands, ("SADD", THREADS, target))
    source_owner = yield from owner(source)
    if source_owner is not None:
        yield from claim(target, source_owner, ttl)
    yield from touch(dst, ttl)


def delete_for_runs(serde: SerializerProtocol, run_ids: Sequence[str]) -> Commands[None]:
    """Delete the checkpoints (with their writes) whose metadata names one of ``run_ids``."""
    runs = set(run_ids_of(run_ids))
    for thread_id in (yield from _threads_of(None)):
        keys = ThreadKeys(thread_id)
        spaces = yield from _namespaces(keys)
        heads = yield from _heads(keys, spaces)
        doomed = [p for p, h in heads.items() if _metadata(serde, h).get("run_id") in runs]
        commands: list[Command] = []
        for ns, cid in doomed:
            record = keys.checkpoint(ns, cid)
            commands += [("DEL", record), ("ZREM", keys.ids(ns), cid), ("SREM", keys.keys, record)]
        for ns, cids in spaces.items():  # (a kept checkpoint whose parent went: a root)
            gone = {cid for space, cid in doomed if space == ns}
            commands += _orphaned(keys, ns, gone, [c for c in cids if c not in gone], heads)
        if commands:
            yield multi(*commands)


# --- the server -----------------------------------------------------------------------


def server_info() -> Commands[dict[str, Any]]:
    return dict((yield "INFO", ("server",), True))


def rewriting() -> Commands[bool]:
    """Whether Redis is rewriting its AOF or writing an RDB snapshot."""
    info = yield "INFO", ("persistence",), True
    busy = ("aof_rewrite_in_progress", "aof_rewrite_scheduled", "rdb_bgsave_in_progress")
    return any(int(info.get(k, 0)) for k in busy)


def rewrite_aof() -> Commands[bool]:
    """Start an AOF rewrite when the AOF is on; whether one started (a managed server
    may refuse the command)."""
    info = yield "INFO", ("persistence",), True
    if not int(info.get("aof_enabled", 0)):
        return False
    return not isinstance((yield "TRY", ("BGREWRITEAOF",), True), Exception)


def snapshot() -> Commands[bool]:
    """Start an RDB snapshot when snapshots are configured (``save`` is not empty)."""
    reply = yield "TRY", ("CONFIG", "GET", "save"), True
    if isinstance(reply, Exception) or not _save_points(reply):
        return False
    return not isinstance((yield "TRY", ("BGSAVE", "SCHEDULE"), True), Exception)


def _save_points(reply: Any) -> str:
    values = list(reply.values()) if isinstance(reply, dict) else list(reply)[1::2]
    return " ".join(text_of(v) for v in values).strip()
