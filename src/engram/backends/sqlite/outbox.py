"""The publication outbox in a SQLite file (:mod:`engram.stores.hot.outbox` says what a
row is and how it is keyed): ``INSERT ... ON CONFLICT DO NOTHING`` on the idempotency key.

:meth:`PublicationLedger.erase` deletes a user's rows and compacts the file;
``Memory.forget`` calls it for ``<home>/outbox.db``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from engram._files import private_file
from engram._principal import Principal
from engram.backends.sqlite._wal import enable_wal
from engram.errors import BackendError
from engram.stores.hot.outbox import PublishedReport, draft_hash, idempotency_key

__all__ = ["PublicationLedger", "PublishedReport", "draft_hash", "idempotency_key"]

MIGRATIONS: tuple[str, ...] = (
    """CREATE TABLE publications (
        idempotency_key TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        draft_hash TEXT NOT NULL,
        approved_by TEXT NOT NULL,
        report TEXT NOT NULL,
        published_at TEXT NOT NULL
    )""",
    "CREATE INDEX publications_by_thread ON publications (tenant_id, user_id, thread_id)",
)

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS ledger_version (version INTEGER NOT NULL)"
INSERT = """INSERT INTO publications (idempotency_key, tenant_id, user_id, thread_id, draft_hash,
    approved_by, report, published_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (idempotency_key) DO NOTHING"""
COLUMNS = "idempotency_key, thread_id, draft_hash, approved_by, report, published_at"
SELECT_KEY = f"SELECT {COLUMNS} FROM publications WHERE idempotency_key = ?"
SELECT_USER = (
    f"SELECT {COLUMNS} FROM publications WHERE tenant_id = ? AND user_id = ?"
    " ORDER BY published_at, idempotency_key"
)
DELETE_USER = "DELETE FROM publications WHERE tenant_id = ? AND user_id = ?"
# Rewrite the file without free pages, then copy the WAL back and empty it.
COMPACT = ("VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)")


@dataclass(frozen=True, slots=True)
class PublicationLedger:
    """The outbox in a SQLite file (``<home>/outbox.db`` by default)."""

    path: Path
    name: ClassVar[str] = "outbox"
    """How :meth:`erase` is named in an erasure report."""

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            private_file(self.path)
            with closing(sqlite3.connect(self.path, timeout=10.0)) as conn, conn:
                enable_wal(conn)
                yield conn
        except sqlite3.Error as exc:
            raise BackendError(f"publication ledger {self.path}: {exc}") from exc

    def setup(self) -> None:
        """Create or upgrade the schema (idempotent)."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(VERSION_TABLE)
            row = conn.execute("SELECT max(version) FROM ledger_version").fetchone()
            for version in range((row[0] or 0) + 1, len(MIGRATIONS) + 1):
                conn.execute(MIGRATIONS[version - 1])
                conn.execute("INSERT INTO ledger_version (version) VALUES (?)", (version,))

    def publish(
        self, principal: Principal, thread_id: str, report: str, approved_by: str
    ) -> PublishedReport:
        """Publish ``report`` once: a second call with the same draft returns the first row."""
        self.setup()
        digest = draft_hash(report)
        key = idempotency_key(principal, thread_id, digest)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        row = (key, principal.tenant_id, principal.user_id, thread_id, digest, approved_by)
        with self._connect() as conn:
            created = conn.execute(INSERT, (*row, report, now)).rowcount == 1
            stored = conn.execute(SELECT_KEY, (key,)).fetchone()
        return replace(PublishedReport(*stored), created=created)

    def publications(self, principal: Principal) -> list[PublishedReport]:
        """Every report published for ``principal``, oldest first."""
        self.setup()
        with self._connect() as conn:
            rows = conn.execute(SELECT_USER, principal.namespace).fetchall()
        return [PublishedReport(*row) for row in rows]

    def erase(self, principal: Principal) -> dict[str, int]:
        """Delete every report published for ``principal``, then VACUUM the file and
        truncate its WAL so no byte of them remains. A missing file stays missing."""
        if not self.path.exists():
            return {"publications": 0}
        self.setup()
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            removed = conn.execute(DELETE_USER, principal.namespace).rowcount
        with self._connect() as conn:
            for statement in COMPACT:
                conn.execute(statement)
        return {"publications": removed}
