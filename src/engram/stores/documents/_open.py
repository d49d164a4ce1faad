"""Open a document store from a location: a directory (Markdown files) or a URL.

The one place under ``stores/documents`` that names a backend: :data:`ENGINES` maps a
scheme (``files`` for a plain directory) to a lazy loader of the backend module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from engram.config import AppRole, parse_url
from engram.errors import ConfigError
from engram.recall import Embedder
from engram.stores.documents.contract import DocumentEngine, DocumentOptions, DocumentStore


def _files() -> DocumentEngine:
    from engram.backends.files import documents

    return documents


def _postgres() -> DocumentEngine:
    from engram.backends.postgres import documents

    return documents


ENGINES: Final[Mapping[str, Callable[[], DocumentEngine]]] = {
    "files": _files,
    "postgresql": _postgres,
}
"""Scheme -> document backend; a location without ``://`` is a directory (``files``)."""


def _engine(location: str | Path, scheme: str | None) -> tuple[DocumentEngine, str]:
    """The backend for ``location`` (``scheme`` when given) and the location as that
    backend takes it."""
    where = str(location)
    if scheme is None and isinstance(location, str) and "://" in location:
        parsed = parse_url(location)
        scheme, where = parsed.scheme, parsed.dsn
    loader = ENGINES.get(scheme or "files")
    if loader is None:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(f"the document tier has no {scheme} backend; use {known}")
    return loader(), where


def open_documents(
    location: str | Path,
    *,
    embedder: Embedder | None = None,
    home: str | Path | None = None,
    index_path: str | Path | None = None,
    setup_role: AppRole | None = None,
    scheme: str | None = None,
) -> DocumentStore:
    """The document store at ``location`` (use it as a context manager).

    The backend is the location's URL scheme, ``files`` for a directory, or ``scheme``
    when given (e.g. ``"postgresql"`` for a libpq ``key=value`` connection string).

    With ``setup_role``, ``location`` is an admin's: the schema and that application role
    are set up first (idempotent), and the store then connects as the role.
    """
    options = DocumentOptions(
        embedder,
        Path(home) if home is not None else None,
        Path(index_path) if index_path is not None else None,
    )
    engine, where = _engine(location, scheme)
    if setup_role is not None:
        where = engine.setup(where, setup_role)
    return engine.open_store(where, options)


def setup_documents(
    admin_location: str | Path, role: AppRole | None = None, *, scheme: str | None = None
) -> str:
    """Create or migrate the tier's schema as an admin; the location the app opens
    (for PostgreSQL: the connection string of ``role``, default ``engram_app``)."""
    engine, where = _engine(admin_location, scheme)
    return engine.setup(where, role)
