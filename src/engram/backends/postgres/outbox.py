"""The publication outbox in PostgreSQL: the ``engram_publications`` table the hot tier's
``setup()`` creates (row-level security on the tenant, like every table), reached as the
application role. :mod:`engram.stores.hot.outbox` says what a row is and how it is keyed.

:meth:`PostgresPublicationLedger.erase` deletes a user's rows and rewrites the table
(``VACUUM FULL``, when the role may) so no byte of the reports stays in its files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import ClassVar

from engram._principal import Principal
from engram.backends.postgres._hot_sql import PUBLICATIONS_TABLE as TABLE
from engram.backends.postgres._roles import SET_TENANT, vacuum_full
from engram.errors import BackendError, MissingDependencyError
from engram.stores.hot.outbox import PublishedReport, draft_hash, idempotency_key

try:
    import psycopg
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("PostgreSQL needs: pip install 'engram[postgres]'") from exc

_COLUMNS = "idempotency_key, thread_id, draft_hash, approved_by, report, published_at"
_INSERT = f"""INSERT INTO {TABLE} (idempotency_key, tenant_id, user_id, thread_id, draft_hash,
    approved_by, report, published_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (idempotency_key) DO NOTHING"""
_SELECT_KEY = f"SELECT {_COLUMNS} FROM {TABLE} WHERE idempotency_key = %s"
_SELECT_USER = (
    f"SELECT {_COLUMNS} FROM {TABLE} WHERE tenant_id = %s AND user_id = %s"
    " ORDER BY published_at, idempotency_key"
)
_DELETE_USER = f"DELETE FROM {TABLE} WHERE tenant_id = %s AND user_id = %s"

Conn = psycopg.Connection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class PostgresPublicationLedger:
    """The outbox table, reached at ``url`` (the hot tier's: the application role's from
    ``setup()``). Every statement names the tenant and user, and the tenant setting
    scopes it under row-level security. One short connection per call: an agent
    publishes rarely, and a frozen value compares equal to another over the same URL."""

    url: str
    name: ClassVar[str] = "outbox"
    """How :meth:`erase` is named in an erasure report."""

    @contextmanager
    def _tenant(self, tenant_id: str) -> Iterator[Conn]:
        try:
            with psycopg.connect(self.url) as conn, conn.transaction():
                conn.execute(SET_TENANT, (tenant_id,))
                yield conn
        except psycopg.Error as exc:
            raise BackendError(f"publication outbox failed: {exc}") from exc

    def publish(
        self, principal: Principal, thread_id: str, report: str, approved_by: str
    ) -> PublishedReport:
        """Publish ``report`` once: a second call with the same draft returns the first row."""
        digest = draft_hash(report)
        key = idempotency_key(principal, thread_id, digest)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        row = (key, *principal.namespace, thread_id, digest, approved_by, report, now)
        with self._tenant(principal.tenant_id) as conn:
            created = conn.execute(_INSERT, row).rowcount == 1
            stored = conn.execute(_SELECT_KEY, (key,)).fetchone()
        if stored is None:
            raise BackendError("publication outbox: the row just written is not there")
        return replace(_report(stored), created=created)

    def publications(self, principal: Principal) -> list[PublishedReport]:
        """Every report published for ``principal``, oldest first."""
        with self._tenant(principal.tenant_id) as conn:
            rows = conn.execute(_SELECT_USER, principal.namespace).fetchall()
        return [_report(row) for row in rows]

    def erase(self, principal: Principal) -> dict[str, int]:
        """Delete every report published for ``principal``, then ``VACUUM FULL`` the table
        when this role may (it holds ``MAINTAIN`` on PostgreSQL 17+), so dead rows leave
        no bytes in its files."""
        with self._tenant(principal.tenant_id) as conn:
            removed = conn.execute(_DELETE_USER, principal.namespace).rowcount
        if removed:
            vacuum_full(self.url, TABLE, "publication outbox")
        return {"publications": removed}


def _report(row: tuple[object, ...]) -> PublishedReport:
    key, thread_id, digest, approved_by, report, published_at = (str(v) for v in row)
    return PublishedReport(key, thread_id, digest, approved_by, report, published_at)
