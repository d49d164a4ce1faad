"""API keys in PostgreSQL: one table, row-level security on the tenant like every tier.

:func:`setup` runs as an admin (migrations, the application role and its grants) and
returns the role's connection string; :class:`PostgresKeyStore` connects as that role
and sets ``app.tenant_id`` in each transaction, so a statement sees and writes only the
rows of the tenant it names, even one that forgot its predicate.
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
    vacuum_full,
)
from engram.config import AppRole
from engram.errors import BackendError, ConflictError, MissingDependencyError
from engram.stores.keys.contract import KeyRecord, KeyStore

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

TABLE = "engram_api_keys"
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE {TABLE} (
        tenant_id text NOT NULL,
        key_id text NOT NULL,
        user_id text,
        scopes text[] NOT NULL,
        digest text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        label text NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, key_id)
    );
    """
    + "".join(f"{statement};" for statement in tenant_policy(TABLE)),
)
_COLUMNS = "key_id, tenant_id, user_id, scopes, digest, created_at, expires_at, revoked_at, label"
_INSERT = f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
_SELECT_ONE = f"SELECT {_COLUMNS} FROM {TABLE} WHERE tenant_id = %s AND key_id = %s"
_SELECT_ALL = f"SELECT {_COLUMNS} FROM {TABLE} WHERE tenant_id = %s ORDER BY created_at, key_id"
_REVOKE = (
    f"UPDATE {TABLE} SET revoked_at = %s "
    "WHERE tenant_id = %s AND key_id = %s AND revoked_at IS NULL"
)
_DELETE_USER = f"DELETE FROM {TABLE} WHERE tenant_id = %s AND user_id = %s"

Conn = psycopg.Connection[tuple[object, ...]]


def setup(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the keys table and the application role; the role's URL."""
    return setup_table(admin_url, role, TABLE, MIGRATIONS, "API key")


def has_keys(url: str) -> bool:
    """Whether the database at ``url`` holds the keys table (a database the server never
    kept keys in has none)."""
    try:
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()
    except psycopg.Error as exc:
        raise BackendError(f"API key store failed: {exc}") from exc
    return found is not None and found[0] is not None


def _record(row: tuple[object, ...]) -> KeyRecord:
    key_id, tenant, user, scopes, digest, created, expires, revoked, label = row
    if not isinstance(created, datetime) or not isinstance(scopes, list):
        raise BackendError("unexpected column types in engram_api_keys")
    return KeyRecord(
        str(key_id),
        str(tenant),
        None if user is None else str(user),
        frozenset(str(scope) for scope in scopes),
        str(digest),
        created,
        expires if isinstance(expires, datetime) else None,
        revoked if isinstance(revoked, datetime) else None,
        str(label),
    )


class PostgresKeyStore(KeyStore):
    """The keys table, reached as the application role from :func:`setup` (a role that
    bypasses row-level security is refused)."""

    def __init__(self, url: str, *, max_size: int = 4) -> None:
        self._url = url
        self._max_size = max_size
        self._pool: ConnectionPool[Conn] | None = None

    def _connections(self) -> ConnectionPool[Conn]:
        if self._pool is None:
            refuse_bypass(self._url, "key store")
            self._pool = ConnectionPool(self._url, min_size=1, max_size=self._max_size, open=True)
        return self._pool

    @contextmanager
    def _tenant(self, tenant_id: str) -> Iterator[Conn]:
        try:
            with self._connections().connection() as conn, conn.transaction():
                conn.execute(SET_TENANT, (tenant_id,))
                yield conn
        except psycopg.errors.UniqueViolation as exc:
            raise ConflictError("that key id already exists") from exc
        except psycopg.Error as exc:
            raise BackendError(f"API key store failed: {exc}") from exc

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def add(self, record: KeyRecord) -> None:
        row = (
            record.key_id,
            record.tenant_id,
            record.user_id,
            sorted(record.scopes),
            record.digest,
            record.created_at,
            record.expires_at,
            record.revoked_at,
            record.label,
        )
        with self._tenant(record.tenant_id) as conn:
            conn.execute(_INSERT, row)

    def get(self, tenant_id: str, key_id: str) -> KeyRecord | None:
        with self._tenant(tenant_id) as conn:
            row = conn.execute(_SELECT_ONE, (tenant_id, key_id)).fetchone()
        return None if row is None else _record(row)

    def list(self, tenant_id: str) -> list[KeyRecord]:
        with self._tenant(tenant_id) as conn:
            rows = conn.execute(_SELECT_ALL, (tenant_id,)).fetchall()
        return [_record(row) for row in rows]

    def revoke(self, tenant_id: str, key_id: str, when: datetime) -> bool:
        with self._tenant(tenant_id) as conn:
            return conn.execute(_REVOKE, (when, tenant_id, key_id)).rowcount == 1

    def erase_user(self, tenant_id: str, user_id: str) -> int:
        """Delete the user's keys, then ``VACUUM FULL`` the table when this role may (it
        holds ``MAINTAIN`` on PostgreSQL 17+), so the dead rows leave its files."""
        with self._tenant(tenant_id) as conn:
            removed = conn.execute(_DELETE_USER, (tenant_id, user_id)).rowcount
        if removed:
            vacuum_full(self._url, TABLE, "API key table")
        return removed
