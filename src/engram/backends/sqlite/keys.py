"""API keys in the embedded home's SQLite database (``<home>/memory.db``, beside the cold
tier's tables, with their own version table)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

from engram._files import private_file
from engram.backends.sqlite._wal import enable_wal
from engram.errors import BackendError, ConflictError
from engram.stores.keys.contract import KeyRecord, KeyStore

MIGRATIONS: tuple[str, ...] = (
    """CREATE TABLE engram_api_keys (
        tenant_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        user_id TEXT,
        scopes TEXT NOT NULL,
        digest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        revoked_at TEXT,
        label TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, key_id)
    )""",
)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS engram_api_keys_version (version INTEGER NOT NULL)"
COLUMNS = "key_id, tenant_id, user_id, scopes, digest, created_at, expires_at, revoked_at, label"
INSERT = f"INSERT INTO engram_api_keys ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
SELECT_ONE = f"SELECT {COLUMNS} FROM engram_api_keys WHERE tenant_id = ? AND key_id = ?"
SELECT_ALL = (
    f"SELECT {COLUMNS} FROM engram_api_keys WHERE tenant_id = ? ORDER BY created_at, key_id"
)
REVOKE = (
    "UPDATE engram_api_keys SET revoked_at = ? "
    "WHERE tenant_id = ? AND key_id = ? AND revoked_at IS NULL"
)

HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'engram_api_keys'"
DELETE_USER = "DELETE FROM engram_api_keys WHERE tenant_id = ? AND user_id = ?"


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def to_row(record: KeyRecord) -> tuple[object, ...]:
    """A record as the table's columns (scopes space-separated, times ISO 8601)."""
    scopes = " ".join(sorted(record.scopes))
    times = (_time(record.created_at), _time(record.expires_at), _time(record.revoked_at))
    return (
        record.key_id,
        record.tenant_id,
        record.user_id,
        scopes,
        record.digest,
        *times,
        record.label,
    )


def from_row(row: tuple[object, ...]) -> KeyRecord:
    key_id, tenant, user, scopes, digest, created, expires, revoked, label = row
    return KeyRecord(
        str(key_id),
        str(tenant),
        None if user is None else str(user),
        frozenset(str(scopes).split()),
        str(digest),
        datetime.fromisoformat(str(created)),
        _parse(None if expires is None else str(expires)),
        _parse(None if revoked is None else str(revoked)),
        str(label),
    )


class SqliteKeyStore(KeyStore):
    """The keys table in the SQLite file ``path``; the schema is created on first use."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._ready = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            private_file(self.path)
            with closing(sqlite3.connect(self.path, timeout=30.0)) as conn, conn:
                if not self._ready:
                    _migrate(conn)
                    self._ready = True
                yield conn
        except sqlite3.IntegrityError as exc:
            raise ConflictError("that key id already exists") from exc
        except sqlite3.Error as exc:
            raise BackendError(f"API keys in {self.path}: {exc}") from exc

    def close(self) -> None:
        """Nothing to release: each call opens and closes its own connection."""

    def add(self, record: KeyRecord) -> None:
        with self._connect() as conn:
            conn.execute(INSERT, to_row(record))

    def get(self, tenant_id: str, key_id: str) -> KeyRecord | None:
        with self._connect() as conn:
            row = conn.execute(SELECT_ONE, (tenant_id, key_id)).fetchone()
        return None if row is None else from_row(row)

    def list(self, tenant_id: str) -> list[KeyRecord]:
        with self._connect() as conn:
            rows = conn.execute(SELECT_ALL, (tenant_id,)).fetchall()
        return [from_row(row) for row in rows]

    def revoke(self, tenant_id: str, key_id: str, when: datetime) -> bool:
        with self._connect() as conn:
            return conn.execute(REVOKE, (_time(when), tenant_id, key_id)).rowcount == 1

    def erase_user(self, tenant_id: str, user_id: str) -> int:
        with self._connect() as conn:
            conn.execute("PRAGMA secure_delete=ON")  # freed cells are zeroed
            removed = conn.execute(DELETE_USER, (tenant_id, user_id)).rowcount
        if removed:
            with self._connect() as conn:  # the old page images leave the WAL too
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed


def has_keys(path: Path) -> bool:
    """Whether the SQLite file ``path`` exists and holds the keys table (read only)."""
    if not Path(path).is_file():
        return False
    try:
        with closing(sqlite3.connect(read_only_uri(path), uri=True, timeout=30.0)) as conn:
            found = conn.execute(HAS_TABLE).fetchone()
    except sqlite3.Error as exc:
        raise BackendError(f"API keys in {path}: {exc}") from exc
    return found is not None


def read_only_uri(path: Path) -> str:
    """The ``file:`` URI opening ``path`` read only: the path percent-encoded, so a ``#``,
    ``?`` or ``%`` in a folder's name stays part of the path."""
    return Path(path).resolve().as_uri() + "?mode=ro"


def _migrate(conn: sqlite3.Connection) -> None:
    enable_wal(conn)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(VERSION_TABLE)
    row = conn.execute("SELECT max(version) FROM engram_api_keys_version").fetchone()
    for version in range((row[0] or 0) + 1, len(MIGRATIONS) + 1):
        conn.execute(MIGRATIONS[version - 1])
        conn.execute("INSERT INTO engram_api_keys_version (version) VALUES (?)", (version,))
    conn.execute("COMMIT")
