"""The erasure log in the embedded home's SQLite database (``<home>/memory.db``, beside
the cold tier's tables, with its own version table)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

from engram._files import private_file
from engram.backends.sqlite._wal import enable_wal
from engram.errors import BackendError
from engram.stores.audit.contract import ErasureLog, ErasureRecord

MIGRATIONS: tuple[str, ...] = (
    """CREATE TABLE engram_erasures (
        tenant_id TEXT NOT NULL,
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL,
        actor TEXT NOT NULL,
        erased_at TEXT NOT NULL,
        counts TEXT NOT NULL
    )""",
    "CREATE INDEX engram_erasures_tenant ON engram_erasures (tenant_id, seq)",
)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS engram_erasures_version (version INTEGER NOT NULL)"
INSERT = (
    "INSERT INTO engram_erasures (tenant_id, user_id, actor, erased_at, counts) "
    "VALUES (?, ?, ?, ?, ?)"
)
SELECT = (
    "SELECT tenant_id, user_id, actor, erased_at, counts FROM engram_erasures "
    "WHERE tenant_id = ? ORDER BY seq DESC LIMIT ?"
)


def from_row(row: tuple[object, ...]) -> ErasureRecord:
    tenant, user, actor, erased_at, counts = row
    found = json.loads(str(counts))
    return ErasureRecord(
        str(tenant),
        str(user),
        str(actor),
        datetime.fromisoformat(str(erased_at)),
        {str(k): int(v) for k, v in found.items()},
    )


class SqliteErasureLog(ErasureLog):
    """The erasures table in the SQLite file ``path``; the schema is created on first use."""

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
        except sqlite3.Error as exc:
            raise BackendError(f"erasure log in {self.path}: {exc}") from exc

    def close(self) -> None:
        """Nothing to release: each call opens and closes its own connection."""

    def add(self, record: ErasureRecord) -> None:
        counts = json.dumps(dict(record.counts), sort_keys=True)
        row = (record.tenant_id, record.user_id, record.actor, record.erased_at.isoformat())
        with self._connect() as conn:
            conn.execute(INSERT, (*row, counts))

    def list(self, tenant_id: str, limit: int = 200) -> list[ErasureRecord]:
        with self._connect() as conn:
            rows = conn.execute(SELECT, (tenant_id, limit)).fetchall()
        return [from_row(row) for row in rows]


def _migrate(conn: sqlite3.Connection) -> None:
    enable_wal(conn)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(VERSION_TABLE)
    row = conn.execute("SELECT max(version) FROM engram_erasures_version").fetchone()
    for version in range((row[0] or 0) + 1, len(MIGRATIONS) + 1):
        conn.execute(MIGRATIONS[version - 1])
        conn.execute("INSERT INTO engram_erasures_version (version) VALUES (?)", (version,))
    conn.execute("COMMIT")
