"""SQL of the PostgreSQL hot tier: engram's schema around LangGraph's, and the statement
generators :class:`~engram.backends.postgres.hot.PostgresAdmin` runs.

No I/O here. A generator yields ``(sql, params, fetch)`` and receives the rows
(:func:`~engram.stores.hot.contract.drive`), so one serves a sync and an async
connection alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram._principal import Principal
from engram.backends.postgres._roles import SET_TENANT, TENANT, row_policy, tenant_policy
from engram.errors import ConflictError, MissingDependencyError
from engram.stores.hot.contract import (
    PruneReport,
    Statements,
    ThreadInfo,
    ThreadSize,
    is_stale_call,
    owner_params,
    run_ids_of,
)

try:
    from langgraph.checkpoint.postgres.base import MIGRATIONS as LANGGRAPH_MIGRATIONS
    from langgraph.checkpoint.postgres.base import (
        PRUNE_DELTA_THREADS_SQL,
        PRUNE_REFERENCED_BLOBS_SQL,
        PRUNE_SNAPSHOT_SQL,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

# A thread's owner is the one recorded at its first scoped checkpoint, never a later one's.
OWNER_SQL = (
    "(%(tenant)s::text IS NULL OR thread_id IN (SELECT thread_id FROM engram_thread_owners"
    " WHERE tenant_id = %(tenant)s AND (%(user)s::text IS NULL OR user_id = %(user)s)))"
)

LIST_THREADS_SQL = f"""
SELECT c.thread_id, count(*) AS checkpoints, max(c.checkpoint_id) AS last_checkpoint_id,
       min(o.tenant_id) AS tenant_id, min(o.user_id) AS user_id
FROM checkpoints c LEFT JOIN engram_thread_owners o ON o.thread_id = c.thread_id
WHERE c.checkpoint_ns = '' AND {OWNER_SQL.replace("thread_id IN", "c.thread_id IN", 1)}
GROUP BY c.thread_id
ORDER BY last_checkpoint_id DESC
"""

# Stored sizes (pg_column_size: after TOAST compression), so growth is what the disk sees.
SIZE_CHECKPOINTS_SQL = f"""
SELECT thread_id, count(*) AS n,
       coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) AS bytes
FROM checkpoints
WHERE (%(threads)s::text[] IS NULL OR thread_id = ANY(%(threads)s)) AND {OWNER_SQL}
GROUP BY thread_id ORDER BY thread_id
"""

SIZE_WRITES_SQL = """
SELECT thread_id, count(*) AS n, coalesce(sum(pg_column_size(blob)), 0) AS bytes
FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s) GROUP BY thread_id
"""

SIZE_BLOBS_SQL = """
SELECT thread_id, count(*) AS n, coalesce(sum(pg_column_size(blob)), 0) AS bytes
FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s) GROUP BY thread_id
"""

PRUNE_NAMESPACES_SQL = "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s"

PRUNE_CUTOFF_SQL = """
SELECT checkpoint_id FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s
ORDER BY checkpoint_id DESC LIMIT 1 OFFSET %s
"""

PRUNE_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s
RETURNING 1
"""

# The channel versions the deleted checkpoints referenced: candidates for blob removal.
PRUNE_CHECKPOINTS_SQL = """
WITH deleted AS (
    DELETE FROM checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id < %s
    RETURNING checkpoint_id, checkpoint -> 'channel_versions' AS versions
)
SELECT deleted.checkpoint_id, v.key AS channel, v.value AS version
FROM deleted LEFT JOIN LATERAL jsonb_each_text(deleted.versions) AS v ON true
"""

PRUNE_PARENTS_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id < %s
"""

PRUNE_BLOBS_SQL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)
RETURNING 1
"""

# The root checkpoint a subgraph call's namespace started from.
PRUNE_CALL_ROOT_SQL = """
SELECT metadata -> 'parents' ->> '' AS root FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s
ORDER BY checkpoint_id DESC LIMIT 1
"""

PRUNE_CALL_SQL = tuple(
    f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = %s RETURNING 1"
    for table in ("checkpoint_writes", "checkpoints", "checkpoint_blobs")
)

COUNT_KEPT_SQL = "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s"

COPY_THREAD_SQL = (
    """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
        type, checkpoint, metadata)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
        metadata
    FROM checkpoints WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
    """INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(target)s, checkpoint_ns, channel, version, type, blob
    FROM checkpoint_blobs WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
    """INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,
        idx, channel, type, blob)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
    FROM checkpoint_writes WHERE thread_id = %(source)s ON CONFLICT DO NOTHING""",
)

DELETE_RUNS_SQL = """
DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)
RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
"""

# A kept checkpoint whose parent went becomes a root, as in prune and LangGraph's InMemorySaver.
ORPHANS_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id = ANY(%s)
"""

DELETE_RUN_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
OWNERS_TABLE = "engram_thread_owners"
PUBLICATIONS_TABLE = "engram_publications"
VERSION_TABLE = "engram_hot_migrations"
LANGGRAPH_VERSION_TABLE = "checkpoint_migrations"

_OWNED_BY_TENANT = (
    f"EXISTS (SELECT 1 FROM {OWNERS_TABLE} o WHERE o.thread_id = {{t}}.thread_id "
    f"AND o.tenant_id = {TENANT})"
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE {OWNERS_TABLE} (
            thread_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            user_id text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )""",
        f"CREATE INDEX {OWNERS_TABLE}_tenant ON {OWNERS_TABLE} (tenant_id, user_id)",
        # Threads written before owners were recorded: the owner their first root
        # checkpoint names (threads written with no owner stay the admin's).
        f"""INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id)
        SELECT DISTINCT ON (thread_id) thread_id, metadata ->> 'tenant_id',
            metadata ->> 'user_id'
        FROM checkpoints
        WHERE checkpoint_ns = '' AND metadata ? 'tenant_id' AND metadata ? 'user_id'
        ORDER BY thread_id, checkpoint_id
        ON CONFLICT DO NOTHING""",
        *tenant_policy(OWNERS_TABLE),
        *(s for t in TABLES for s in row_policy(t, _OWNED_BY_TENANT.format(t=t))),
    ),
    (
        # The publication outbox (engram.backends.postgres.outbox): an agent's side effects.
        f"""CREATE TABLE {PUBLICATIONS_TABLE} (
            idempotency_key text PRIMARY KEY,
            tenant_id text NOT NULL,
            user_id text NOT NULL,
            thread_id text NOT NULL,
            draft_hash text NOT NULL,
            approved_by text NOT NULL,
            report text NOT NULL,
            published_at text NOT NULL
        )""",
        f"CREATE INDEX {PUBLICATIONS_TABLE}_user ON {PUBLICATIONS_TABLE} (tenant_id, user_id)",
        *tenant_policy(PUBLICATIONS_TABLE),
    ),
)
"""engram's own schema around LangGraph's (append-only, versioned in ``VERSION_TABLE``)."""

SCHEMA_VERSIONS_SQL = f"""
SELECT (SELECT max(v) FROM {LANGGRAPH_VERSION_TABLE}) AS langgraph,
       (SELECT max(version) FROM {VERSION_TABLE}) AS engram
"""
HAS_TABLES_SQL = "SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL AS found"
SETUP_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('engram_hot_setup'))"
VERSION_TABLE_SQL = f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version integer PRIMARY KEY)"
GET_VERSION_SQL = f"SELECT coalesce(max(version), 0) AS v FROM {VERSION_TABLE}"
SET_VERSION_SQL = f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)"

OWNER_OF_SQL = f"SELECT tenant_id, user_id FROM {OWNERS_TABLE} WHERE thread_id = %s"
CLAIM_SQL = (
    f"INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id) VALUES (%s, %s, %s) "
    "ON CONFLICT (thread_id) DO NOTHING"
)
# A write stored after an erasure of its user's threads: the thread holds rows, no owner.
SETTLE_SQL = f"""INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id)
SELECT %(thread)s, %(tenant)s, %(user)s
WHERE EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = %(thread)s)
   OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = %(thread)s)
ON CONFLICT (thread_id) DO NOTHING"""
OWNED_SQL = (
    f"SELECT thread_id FROM {OWNERS_TABLE} WHERE tenant_id = %(tenant)s AND user_id = %(user)s"
)
CLAIM_COPY_SQL = f"""INSERT INTO {OWNERS_TABLE} (thread_id, tenant_id, user_id)
SELECT %(target)s, tenant_id, user_id FROM {OWNERS_TABLE} WHERE thread_id = %(source)s
ON CONFLICT (thread_id) DO NOTHING"""
DELETE_OWNERS_SQL = f"DELETE FROM {OWNERS_TABLE} WHERE thread_id = ANY(%s)"

DELETE_THREADS_SQL = tuple(
    f"DELETE FROM {table} WHERE thread_id = ANY(%s)" for table in (*TABLES, OWNERS_TABLE)
)

# Rewrites each table and its TOAST table into new files, so deleted rows leave no bytes
# (ACCESS EXCLUSIVE lock while it runs); cannot run inside a transaction block.
VACUUM_SQL = f"VACUUM (FULL, ANALYZE) {', '.join((*TABLES, OWNERS_TABLE))}"


# --- schema and roles -------------------------------------------------------------------


def schema_current() -> Statements[bool]:
    """Whether LangGraph's and engram's migrations have all run (reads only)."""
    found = yield HAS_TABLES_SQL, (LANGGRAPH_VERSION_TABLE, VERSION_TABLE), True
    if not found[0]["found"]:
        return False
    row = (yield SCHEMA_VERSIONS_SQL, (), True)[0]
    langgraph, engram = row["langgraph"], row["engram"]
    return (
        langgraph is not None
        and langgraph >= len(LANGGRAPH_MIGRATIONS) - 1
        and engram is not None
        and engram >= len(MIGRATIONS)
    )


def migrate() -> Statements[None]:
    """engram's migrations (after LangGraph's), one transaction under a lock."""
    yield SETUP_LOCK_SQL, (), False
    yield VERSION_TABLE_SQL, (), False
    done = int((yield GET_VERSION_SQL, (), True)[0]["v"])
    for version, statements in enumerate(MIGRATIONS[done:], start=done + 1):
        for statement in statements:
            yield statement, (), False
        yield SET_VERSION_SQL, (version,), False


# --- statements ---------------------------------------------------------------------


def act_for(owner: Principal | None) -> Statements[None]:
    """Scope the rest of the transaction to ``owner``'s tenant (when there is one)."""
    if owner is not None:
        yield SET_TENANT, (owner.tenant_id,), False


def owner(thread_id: str) -> Statements[Principal | None]:
    """The thread's owner as the current tenant sees it (``None``: no such thread, one
    written without a principal, or another tenant's)."""
    rows = yield OWNER_OF_SQL, (thread_id,), True
    return Principal(rows[0]["tenant_id"], rows[0]["user_id"]) if rows else None


def claim(thread_id: str, principal: Principal) -> Statements[Principal | None]:
    """Record ``principal`` as the owner unless the thread has one; the owner after
    (``None`` when another tenant holds the id: row-level security hides its owner)."""
    yield from act_for(principal)
    yield CLAIM_SQL, (thread_id, principal.tenant_id, principal.user_id), False
    return (yield from owner(thread_id))


def settle(thread_id: str, principal: Principal) -> Statements[Principal | None]:
    """:meth:`~engram.stores.hot.contract.HotAdmin.settle` (as ``principal``'s tenant)."""
    yield from act_for(principal)
    yield SETTLE_SQL, {"thread": thread_id, **owner_params(principal)}, False
    return (yield from owner(thread_id))


def forget_owners(thread_ids: Sequence[str]) -> Statements[None]:
    yield DELETE_OWNERS_SQL, ([str(t) for t in thread_ids],), False


def delete_thread(thread_id: str) -> Statements[None]:
    """LangGraph's ``delete_thread``: every row of the thread, and its owner."""
    for sql in DELETE_THREADS_SQL:
        yield sql, ([thread_id],), False


def list_threads(owner: Principal | None) -> Statements[list[ThreadInfo]]:
    yield from act_for(owner)
    rows = yield LIST_THREADS_SQL, owner_params(owner), True
    return [
        ThreadInfo(
            r["thread_id"], r["tenant_id"], r["user_id"], r["checkpoints"], r["last_checkpoint_id"]
        )
        for r in rows
    ]


def sizes(
    thread_ids: Sequence[str] | None, owner: Principal | None
) -> Statements[list[ThreadSize]]:
    threads = None if thread_ids is None else list(thread_ids)
    yield from act_for(owner)
    found = yield SIZE_CHECKPOINTS_SQL, {"threads": threads, **owner_params(owner)}, True
    ids = {"threads": [r["thread_id"] for r in found]}
    writes = _by_thread((yield SIZE_WRITES_SQL, ids, True))
    blobs = _by_thread((yield SIZE_BLOBS_SQL, ids, True))
    return [
        ThreadSize(
            r["thread_id"], r["n"], writes.get(r["thread_id"], (0, 0))[0],
            blobs.get(r["thread_id"], (0, 0))[0], r["bytes"],
            writes.get(r["thread_id"], (0, 0))[1], blobs.get(r["thread_id"], (0, 0))[1],
        )
        for r in found
    ]  # fmt: skip


def _by_thread(rows: list[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    return {r["thread_id"]: (int(r["n"]), int(r["bytes"])) for r in rows}


def prune(thread_id: str, keep_last: int) -> Statements[PruneReport]:
    """Keep the newest ``keep_last`` checkpoints of each namespace, their writes and blobs.

    Subgraph call namespaces whose root checkpoint goes are deleted whole. One
    REPEATABLE READ transaction, like LangGraph's own prune: a run that
    appends meanwhile is neither seen nor deleted.
    """
    yield PRUNE_SNAPSHOT_SQL, (), False
    if (yield PRUNE_DELTA_THREADS_SQL, ([thread_id], [thread_id]), True):
        raise ConflictError(f"thread {thread_id!r} uses a DeltaChannel; pruning would lose state")
    counts = [0, 0, 0]  # writes, checkpoints, blobs
    root_cutoff: str | None = None
    rows = yield PRUNE_NAMESPACES_SQL, (thread_id,), True
    for ns in sorted(r["checkpoint_ns"] for r in rows):
        root = (yield PRUNE_CALL_ROOT_SQL, (thread_id, ns), True)[0]["root"] if ns else None
        if is_stale_call(ns, root, root_cutoff):
            for i, sql in enumerate(PRUNE_CALL_SQL):
                counts[i] += len((yield sql, (thread_id, ns), True))
            continue
        cutoff = yield PRUNE_CUTOFF_SQL, (thread_id, ns, keep_last - 1), True
        if cutoff:
            root_cutoff = root_cutoff if ns else cutoff[0]["checkpoint_id"]
            found = yield from _prune_namespace((thread_id, ns, cutoff[0]["checkpoint_id"]))
            counts = [a + b for a, b in zip(counts, found, strict=True)]
    kept = yield COUNT_KEPT_SQL, (thread_id,), True
    return PruneReport(thread_id, kept[0]["n"], counts[1], counts[0], counts[2])


def _prune_namespace(bound: tuple[str, str, str]) -> Statements[list[int]]:
    """Delete checkpoints older than the cutoff in one namespace: [writes, checkpoints, blobs]."""
    thread_id, ns, _ = bound
    writes = len((yield PRUNE_WRITES_SQL, bound, True))
    freed = yield PRUNE_CHECKPOINTS_SQL, bound, True
    yield PRUNE_PARENTS_SQL, bound, False
    referenced = yield PRUNE_REFERENCED_BLOBS_SQL, (thread_id, ns), True
    blobs = 0
    for channel, versions in _garbage(freed, referenced).items():
        blobs += len((yield PRUNE_BLOBS_SQL, (thread_id, ns, channel, versions), True))
    return [writes, len({r["checkpoint_id"] for r in freed}), blobs]


def delete_threads(owner: Principal) -> Statements[list[str]]:
    """Delete every thread of ``owner``, whole (every namespace, pending writes, blobs);
    returns their ids: the ones :func:`list_threads` finds, newest first, then any
    holding no checkpoint (pending writes only, or nothing)."""
    found = [t.thread_id for t in (yield from list_threads(owner))]
    owned = yield OWNED_SQL, owner_params(owner), True
    found += sorted({r["thread_id"] for r in owned} - set(found))
    for sql in DELETE_THREADS_SQL:
        yield sql, (found,), False
    return found


def copy_thread(source: str, target: str) -> Statements[None]:
    """Copy every row of ``source`` to ``target``, owned by ``source``'s owner."""
    yield CLAIM_COPY_SQL, {"source": source, "target": target}, False
    for sql in COPY_THREAD_SQL:
        yield sql, {"source": source, "target": target}, False


def delete_for_runs(run_ids: Sequence[str]) -> Statements[None]:
    """Delete the runs' checkpoints, their writes, and blobs no remaining checkpoint uses;
    a kept checkpoint whose parent went becomes a root."""
    deleted = yield DELETE_RUNS_SQL, (run_ids_of(run_ids),), True
    scopes: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in deleted:
        scopes.setdefault((row["thread_id"], row["checkpoint_ns"]), []).append(row)
    for (thread_id, ns), rows in scopes.items():
        ids = [r["checkpoint_id"] for r in rows]
        yield DELETE_RUN_WRITES_SQL, (thread_id, ns, ids), False
        yield ORPHANS_SQL, (thread_id, ns, ids), False
        freed = [
            {"channel": c, "version": str(v)}
            for r in rows
            for c, v in (r["versions"] or {}).items()
        ]
        referenced = yield PRUNE_REFERENCED_BLOBS_SQL, (thread_id, ns), True
        for channel, versions in _garbage(freed, referenced).items():
            yield PRUNE_BLOBS_SQL, (thread_id, ns, channel, versions), True


def _garbage(
    freed: Sequence[Mapping[str, Any]], referenced: Sequence[Mapping[str, Any]]
) -> dict[str, list[str]]:
    """Blob versions only deleted checkpoints used, by channel."""
    kept = {(r["channel"], r["version"]) for r in referenced}
    garbage: dict[str, set[str]] = {}
    for r in freed:
        if r["channel"] is not None and (r["channel"], r["version"]) not in kept:
            garbage.setdefault(r["channel"], set()).add(r["version"])
    return {channel: sorted(versions) for channel, versions in garbage.items()}
