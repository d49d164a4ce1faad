"""URL-based configuration: one URL picks a backend for a tier.

``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``,
``postgresql://user:pw@host:port/db``, ``redis://host:port/0``, ``qdrant://host:port``,
``memory://``... Parsing is pure (nothing here touches the file system) and knows no list of
engines: each tier's ``_open`` module says which schemes it serves and refuses the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.errors import ConfigError

Scheme = str
"""A URL's scheme before any ``+variant``, lower-cased, aliases resolved (``postgresql``)."""

DEFAULT_HOME = Path(".engram")
"""Where the embedded default keeps its files, relative to the working directory."""

_ALIASES: dict[str, Scheme] = {"postgres": "postgresql", "rediss": "redis"}
"""Other spellings of a scheme. Which schemes a tier serves is its own engine table's
business (``stores/<tier>/_open.py``), so a new engine is added there alone."""
_SCHEME = re.compile(r"[a-z][a-z0-9.-]*")


@dataclass(frozen=True, slots=True)
class StoreURL:
    """A parsed backend URL: ``scheme`` plus either a file ``path`` or a ``dsn``."""

    scheme: Scheme
    raw: str
    path: Path | None = None

    @property
    def dsn(self) -> str:
        """The connection string handed to the driver (PostgreSQL, Redis)."""
        if self.scheme == "postgresql" and self.raw.startswith("postgres://"):
            return "postgresql://" + self.raw[len("postgres://") :]
        return self.raw


def parse_url(url: str) -> StoreURL:
    """Parse ``url`` into a :class:`StoreURL` or raise :class:`ConfigError`."""
    if not isinstance(url, str) or "://" not in url:
        raise ConfigError(f"not a backend URL: {url!r} (expected e.g. sqlite:///.engram/memory.db)")
    named = url.split("://", 1)[0].split("+", 1)[0].lower()
    if not _SCHEME.fullmatch(named):
        raise ConfigError(f"not a backend URL: {url!r} (its scheme {named!r} is malformed)")
    scheme = _ALIASES.get(named, named)
    if scheme == "sqlite":
        return StoreURL("sqlite", url, _sqlite_path(url))
    return StoreURL(scheme, url)


def _sqlite_path(url: str) -> Path:
    rest = url.split("://", 1)[1]
    if not rest.startswith("/") or rest == "/":
        raise ConfigError(
            f"sqlite URL needs a path: sqlite:///relative.db or sqlite:////abs.db, got {url!r}"
        )
    return Path(rest[1:])


def sqlite_url(path: str | Path) -> str:
    """Build a ``sqlite://`` URL for ``path`` (absolute or relative)."""
    return f"sqlite:///{Path(path)}"


def default_url(tier: Literal["hot", "cold"], home: str | Path = DEFAULT_HOME) -> str:
    """The embedded default URL of a tier under ``home`` (``./.engram/`` by default)."""
    name = {"hot": "checkpoints.db", "cold": "memory.db"}[tier]
    return sqlite_url(Path(home) / name)


def default_documents_root(home: str | Path = DEFAULT_HOME) -> Path:
    """The embedded default document root under ``home``."""
    return Path(home) / "documents"


def default_outbox_path(home: str | Path = DEFAULT_HOME) -> Path:
    """The embedded default publication outbox (an agent's published reports) under ``home``."""
    return Path(home) / "outbox.db"


@dataclass(frozen=True, slots=True)
class AppRole:
    """The login role the application uses on PostgreSQL: no superuser, no ``BYPASSRLS``,
    so row-level security always applies to it. ``setup()`` creates it from an admin URL."""

    name: str = "engram_app"
    password: str | None = None
