"""The document tier's contract: the records, the store interface every backend
implements (:class:`DocumentStore`) and what a backend module provides
(:class:`DocumentEngine`).

Two backends: plain files under a root per tenant with a SQLite FTS5 index
(``engram.backends.files``) and PostgreSQL with row-level security
(``engram.backends.postgres.documents``).

Paths are relative POSIX paths (``research/rates.md``); metadata is the document's
YAML front matter. Every call names the :class:`~engram.Principal` it acts for; the
documents belong to its tenant.

No concurrent write is lost: a read-modify-write goes through
:meth:`DocumentStore.update_text`, which writes with ``expected=`` (the digest of
what it read: compare-and-swap) and runs the edit again on the newer text when
another writer saved first. Backends also let it hold off the others meanwhile
(:meth:`DocumentStore.exclusive`), so writers take turns instead of retrying.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from engram._principal import Principal
from engram._retry import on_conflict
from engram.config import AppRole
from engram.errors import ConflictError, NotFoundError, StaleWriteError
from engram.recall import Embedder
from engram.stores.documents.markdown import parse_text, render, split_front_matter

SearchMode = Literal["hybrid", "keyword", "semantic"]

SCAFFOLD: dict[str, str] = {
    "README.md": "# Project memory\n\nWhat this project is, and where things are kept.\n",
    "PROGRESS.md": "# Progress\n\n## Done\n\n## Next\n",
    "user-profiles/README.md": "# User profiles\n\nOne file per user: preferences, context.\n",
    "research/README.md": "# Research\n\nFindings with their sources.\n",
    "conventions/README.md": "# Conventions\n\nHow things are done here.\n",
    "learnings/README.md": "# Learnings\n\nWhat worked, what did not, and why.\n",
}
"""The layout :meth:`DocumentStore.init` creates: path -> initial text."""


@dataclass(frozen=True, slots=True)
class Document:
    """A document: its path, Markdown body and front-matter metadata."""

    path: str
    content: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The file text: front matter followed by the body."""
        return render(self.content, self.metadata)


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """What a listing tells about a document without reading its body."""

    path: str
    size: int
    digest: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A matching paragraph: where it is (path, heading, 1-based lines) and its text."""

    path: str
    heading: str
    text: str
    line_start: int
    line_end: int
    score: float


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What :func:`sync` changed in the target store."""

    upserted: tuple[str, ...]
    deleted: tuple[str, ...]
    unchanged: int


class DocumentStore(ABC):
    """The document tier's interface; backends implement the raw-text operations."""

    @abstractmethod
    def read_text(self, principal: Principal, path: str) -> str:
        """The full text of the document at ``path`` (NotFoundError if absent)."""

    @abstractmethod
    def write_text(
        self,
        principal: Principal,
        path: str,
        text: str,
        *,
        overwrite: bool = True,
        expected: str | None = None,
    ) -> DocumentInfo:
        """Store ``text`` at ``path`` atomically. ConflictError if it exists and not
        ``overwrite``; StaleWriteError if ``expected`` (a :attr:`DocumentInfo.digest`,
        see :func:`digest_of`) is given and the document is missing or has another
        digest: someone else wrote it since it was read."""

    @abstractmethod
    def list(self, principal: Principal, pattern: str = "**") -> builtins.list[DocumentInfo]:
        """Documents whose path matches the glob ``pattern``, sorted by path."""

    @abstractmethod
    def delete(self, principal: Principal, path: str) -> int:
        """Delete a document or a whole directory; returns how many documents went."""

    @abstractmethod
    def move(self, principal: Principal, source: str, target: str) -> None:
        """Rename a document or directory; ConflictError if ``target`` exists."""

    @abstractmethod
    def search(
        self, principal: Principal, query: str, *, k: int = 10, mode: SearchMode = "hybrid"
    ) -> builtins.list[SearchHit]:
        """The ``k`` best paragraphs for ``query`` (keyword and semantic ranks fused)."""

    @abstractmethod
    def is_dir(self, principal: Principal, path: str) -> bool:
        """Whether ``path`` names a directory (a prefix of some document's path)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the store can be opened again by using it."""

    def compact(self) -> bool:
        """Make deleted bytes unrecoverable from storage (merge indexes, vacuum, truncate
        logs); True if the backend did something. The default does nothing."""
        return False

    def read(self, principal: Principal, path: str) -> Document:
        """The document at ``path`` with its front matter parsed."""
        metadata, body, _ = split_front_matter(self.read_text(principal, path))
        return Document(path, body, metadata)

    def write(
        self,
        principal: Principal,
        path: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        overwrite: bool = True,
    ) -> DocumentInfo:
        """Write ``content`` with ``metadata`` as YAML front matter."""
        return self.write_text(principal, path, render(content, metadata), overwrite=overwrite)

    def update_text(
        self, principal: Principal, path: str, edit: Callable[[str | None], str]
    ) -> DocumentInfo:
        """Read-modify-write ``path`` without losing anyone's write: ``edit`` gets the
        current text (``None`` when there is no document) and returns the new one; it
        runs again on the newer text whenever another writer saved first. An error
        ``edit`` raises leaves the document as it was."""
        with self.exclusive(principal, path):
            return on_conflict(lambda: self._update_once(principal, path, edit))

    def _update_once(
        self, principal: Principal, path: str, edit: Callable[[str | None], str]
    ) -> DocumentInfo:
        try:
            current = self.read_text(principal, path)
        except NotFoundError:
            text = edit(None)
            try:
                return self.write_text(principal, path, text, overwrite=False)
            except ConflictError as exc:
                raise StaleWriteError(f"{path}: created by another writer meanwhile") from exc
        return self.write_text(principal, path, edit(current), expected=digest_of(current))

    def exclusive(self, principal: Principal, path: str) -> AbstractContextManager[None]:
        """Keep other writers of ``path`` waiting while the block runs (what
        :meth:`update_text` holds). Only an optimisation: ``expected=`` keeps writes
        safe without it. The default holds nothing."""
        return nullcontext()

    def exists(self, principal: Principal, path: str) -> bool:
        """Whether a document or directory exists at ``path``."""
        return self.is_dir(principal, path) or bool(self.list(principal, path))

    def init(self, principal: Principal) -> builtins.list[str]:
        """Create the standard layout (README, PROGRESS, folders); keeps existing files."""
        created = []
        for path, text in SCAFFOLD.items():
            try:
                self.write_text(principal, path, text, overwrite=False)
            except ConflictError:
                continue
            created.append(path)
        return created

    def __enter__(self) -> DocumentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class DocumentOptions:
    """How a document store is opened: the embedder for semantic search (``None``: keyword
    search only) and, for files, where the index lives (``index_path``, else
    ``<home>/index/documents.db``)."""

    embedder: Embedder | None = None
    home: Path | None = None
    index_path: Path | None = None


class DocumentEngine(Protocol):
    """A document backend module, named by one entry of the tier's table
    (``engram.stores.documents._open``)."""

    def open_store(self, location: str, options: DocumentOptions) -> DocumentStore:
        """The store at ``location`` (a directory, or the backend's URL); not yet entered."""
        ...

    def setup(self, admin_location: str, role: AppRole | None) -> str:
        """Create or migrate the schema (and application role) as an admin; return the
        location the application opens."""
        ...


def digest_of(text: str) -> str:
    """The :attr:`DocumentInfo.digest` of a document whose text is ``text`` (what
    ``write_text(..., expected=...)`` compares)."""
    return parse_text(text).digest


def sync(source: DocumentStore, target: DocumentStore, principal: Principal) -> SyncReport:
    """Make ``target`` hold exactly ``source``'s documents: upsert changed, drop deleted."""
    have = {info.path: info.digest for info in target.list(principal)}
    upserted, unchanged = [], 0
    for info in source.list(principal):
        if have.pop(info.path, None) == info.digest:
            unchanged += 1
            continue
        target.write_text(principal, info.path, source.read_text(principal, info.path))
        upserted.append(info.path)
    for path in sorted(have):
        target.delete(principal, path)
    return SyncReport(tuple(upserted), tuple(sorted(have)), unchanged)
