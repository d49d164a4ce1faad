"""The erasure log in PostgreSQL: one append-only table, row-level security on the tenant.

:func:`setup` runs as an admin (migrations, the application role and its grants) and
returns the role's connection string; :class:`PostgresErasureLog` connects as that role
and sets ``app.tenant_id`` in each transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from engram.backends.postgres._roles import (
    SET_TENANT,
    refuse_bypass,
    setup_table,
    tenant_policy,
)
from engram.config import AppRole
from engram.errors import BackendError, MissingDependencyError
from engram.stores.audit.contract import ErasureLog, ErasureRecord

try:
    import psycopg
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

TABLE = "engram_erasures"
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE {TABLE} (
        tenant_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        user_id text NOT NULL,
        actor text NOT NULL,
        erased_at timestamptz NOT NULL,
        counts jsonb NOT NULL,
        PRIMARY KEY (tenant_id, seq)
    );
    """
    + "".join(f"{statement};" for statement in tenant_policy(TABLE)),
)
_INSERT = (
    f"INSERT INTO {TABLE} (tenant_id, user_id, actor, erased_at, counts) "
    "VALUES (%s, %s, %s, %s, %s)"
)
_SELECT = (
    f"SELECT tenant_id, user_id, actor, erased_at, counts FROM {TABLE} "
    "WHERE tenant_id = %s ORDER BY seq DESC LIMIT %s"
)

Conn = psycopg.Connection[tuple[object, ...]]


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the erasures table and the application role; the role's URL."""
    return setup_table(admin_url, role, TABLE, MIGRATIONS, "erasure log")


def _record(row: tuple[object, ...]) -> ErasureRecord:
    tenant, user, actor, erased_at, counts = row
    if not isinstance(erased_at, datetime) or not isinstance(counts, dict):
        raise BackendError("unexpected column types in engram_erasures")
    return ErasureRecord(
        str(tenant), str(user), str(actor), erased_at, {str(k): int(v) for k, v in counts.items()}
    )


class PostgresErasureLog(ErasureLog):
    """The erasures table, reached as the application role from :func:`setup`."""

    def __init__(self, url: str, *, max_size: int = 2) -> None:
        self._url = url
        self._max_size = max_size
        self._pool: ConnectionPool[Conn] | None = None

    def _connections(self) -> ConnectionPool[Conn]:
        if self._pool is None:
            refuse_bypass(self._url, "erasure log")
            self._pool = ConnectionPool(self._url, min_size=1, max_size=self._max_size, open=True)
        return self._pool

    @contextmanager
    def _tenant(self, tenant_id: str) -> Iterator[Conn]:
        try:
            with self._connections().connection() as conn, conn.transaction():
                conn.execute(SET_TENANT, (tenant_id,))
                yield conn
        except psycopg.Error as exc:
            raise BackendError(f"erasure log failed: {exc}") from exc

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def add(self, record: ErasureRecord) -> None:
        row = (record.tenant_id, record.user_id, record.actor, record.erased_at)
        with self._tenant(record.tenant_id) as conn:
            conn.execute(_INSERT, (*row, Jsonb(dict(record.counts))))

    def list(self, tenant_id: str, limit: int = 200) -> list[ErasureRecord]:
        with self._tenant(tenant_id) as conn:
            rows = conn.execute(_SELECT, (tenant_id, limit)).fetchall()
        return [_record(row) for row in rows]
