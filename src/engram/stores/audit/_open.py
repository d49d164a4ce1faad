"""Open the erasure log of a home (SQLite, in the cold tier's database) or a PostgreSQL
URL. The one place under ``stores/audit`` that names a backend."""

from __future__ import annotations

from pathlib import Path

from engram.config import DEFAULT_HOME, AppRole, default_url, parse_url
from engram.errors import ConfigError
from engram.stores.audit.contract import ErasureLog


def open_audit(
    home: str | Path | None = None, *, url: str | None = None, role: AppRole | None = None
) -> ErasureLog:
    """The log under ``home`` (``<home>/memory.db``), or on ``url``: a PostgreSQL admin
    URL, whose table and application role ``role`` are set up first."""
    if url is None:
        found = audit_beside(default_url("cold", home or DEFAULT_HOME))
    elif parse_url(url).scheme != "postgresql":
        raise ConfigError(f"the erasure log lives under a home or on postgresql://, not {url!r}")
    else:
        found = audit_beside(setup_audit(url, role))
    assert found is not None  # a home's SQLite file, or a PostgreSQL database
    return found


def setup_audit(admin_url: str, role: AppRole | None = None) -> str:
    """Create or migrate the erasure log on PostgreSQL ``admin_url`` and grant ``role``
    (default ``engram_app``) its use (idempotent), as the other tiers are set up before
    they run as the role; the role's URL."""
    from engram.backends.postgres.audit import setup

    return setup(parse_url(admin_url).dsn, role)


def audit_beside(cold_url: str) -> ErasureLog | None:
    """The erasure log kept with the cold tier at ``cold_url`` (its SQLite file, or its
    PostgreSQL database reached as the application role, set up already); ``None`` for
    a cold tier that has no place for one (Qdrant, in-process)."""
    parsed = parse_url(cold_url)
    if parsed.scheme == "sqlite" and parsed.path is not None and str(parsed.path) != ":memory:":
        from engram.backends.sqlite.audit import SqliteErasureLog

        return SqliteErasureLog(parsed.path)
    if parsed.scheme == "postgresql":
        from engram.backends.postgres.audit import PostgresErasureLog

        return PostgresErasureLog(parsed.dsn)
    return None
