"""Open the key store of a home (SQLite, in the cold tier's database) or a PostgreSQL URL.

The one place under ``stores/keys`` that names a backend.
"""

from __future__ import annotations

from pathlib import Path

from engram.config import DEFAULT_HOME, AppRole, default_url, parse_url
from engram.errors import ConfigError
from engram.stores.keys.contract import KeyStore


def open_keys(
    home: str | Path | None = None, *, url: str | None = None, role: AppRole | None = None
) -> KeyStore:
    """The key store under ``home`` (``<home>/memory.db``, beside the cold tier), or on
    ``url``: a PostgreSQL admin URL, whose schema and application role ``role`` (default
    ``engram_app``) are set up first; the store then connects as that role."""
    if url is None:
        from engram.backends.sqlite.keys import SqliteKeyStore

        path = parse_url(default_url("cold", home or DEFAULT_HOME)).path
        assert path is not None  # a sqlite URL always has one
        return SqliteKeyStore(path)
    if parse_url(url).scheme != "postgresql":
        raise ConfigError(f"API keys live under a home or on postgresql://, not {url!r}")
    from engram.backends.postgres.keys import PostgresKeyStore, setup

    return PostgresKeyStore(setup(parse_url(url).dsn, role))
