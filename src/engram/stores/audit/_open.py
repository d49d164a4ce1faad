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
        from engram.backends.sqlite.audit import SqliteErasureLog

        path = parse_url(default_url("cold", home or DEFAULT_HOME)).path
        assert path is not None  # a sqlite URL always has one
        return SqliteErasureLog(path)
    if parse_url(url).scheme != "postgresql":
        raise ConfigError(f"the erasure log lives under a home or on postgresql://, not {url!r}")
    from engram.backends.postgres.audit import PostgresErasureLog, setup

    return PostgresErasureLog(setup(parse_url(url).dsn, role))
