"""Open the key store of a home (SQLite, in the cold tier's database) or a PostgreSQL URL.

The one place under ``stores/keys`` that names a backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from engram._principal import Principal
from engram.config import DEFAULT_HOME, AppRole, default_url, parse_url
from engram.errors import ConfigError
from engram.stores.keys.contract import KeyStore


def _home_file(home: str | Path) -> Path:
    path = parse_url(default_url("cold", home)).path
    assert path is not None  # a sqlite URL always has one
    return Path(path)


def open_keys(
    home: str | Path | None = None, *, url: str | None = None, role: AppRole | None = None
) -> KeyStore:
    """The key store under ``home`` (``<home>/memory.db``, beside the cold tier), or on
    ``url``: a PostgreSQL admin URL, whose schema and application role ``role`` (default
    ``engram_app``) are set up first; the store then connects as that role."""
    if url is None:
        from engram.backends.sqlite.keys import SqliteKeyStore

        return SqliteKeyStore(_home_file(home or DEFAULT_HOME))
    if parse_url(url).scheme != "postgresql":
        raise ConfigError(f"API keys live under a home or on postgresql://, not {url!r}")
    from engram.backends.postgres.keys import PostgresKeyStore, setup

    return PostgresKeyStore(setup(parse_url(url).dsn, role))


@dataclass(frozen=True, slots=True)
class KeyErasure:
    """The API keys kept beside the tiers as an erasure participant of ``Memory.forget``:
    a forgotten user's keys are deleted, so none of them signs in again. ``where``: the
    home's SQLite file, or the PostgreSQL URL as the application role (no setup)."""

    where: str
    postgres: bool = False
    name: ClassVar[str] = "api_keys"
    """How :meth:`erase` is named in an erasure report."""

    def erase(self, principal: Principal) -> dict[str, int]:
        with self._store() as keys:
            return {"keys": keys.erase_user(principal.tenant_id, principal.user_id)}

    def _store(self) -> KeyStore:
        if self.postgres:
            from engram.backends.postgres.keys import PostgresKeyStore

            return PostgresKeyStore(self.where, max_size=1)
        from engram.backends.sqlite.keys import SqliteKeyStore

        return SqliteKeyStore(Path(self.where))


def home_keys(home: Path) -> KeyErasure | None:
    """The keys under an embedded ``home``, if it holds any table of them (found by
    ``Memory.forget`` through the ``engram.home_participants`` entry point)."""
    from engram.backends.sqlite.keys import has_keys

    path = _home_file(home)
    return KeyErasure(str(path)) if has_keys(path) else None


def url_keys(hot_url: str) -> KeyErasure | None:
    """The keys table beside a PostgreSQL hot tier, if the server set one up there (the
    ``engram.url_participants`` entry point); ``None`` for any other hot tier."""
    if parse_url(hot_url).scheme != "postgresql":
        return None
    from engram.backends.postgres.keys import has_keys

    return KeyErasure(hot_url, postgres=True) if has_keys(hot_url) else None
