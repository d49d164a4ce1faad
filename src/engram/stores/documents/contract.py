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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from engram import _validate as check
from engram._principal import Principal
from engram._retry import on_conflict
from engram.config import AppRole
from engram.errors import (
    AccessDeniedError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
    PathEscapeError,
    SerializationError,
    StaleWriteError,
)
from engram.recall import Embedder
from engram.stores.documents.markdown import ParsedText, is_heading, parse_text, render
from engram.stores.documents.paths import (
    USER_FILE_DIRS,
    USERS_DIR,
    about,
    named_users,
    private_to,
    split_path,
    visible_to,
)

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
    """The document tier's interface.

    Backends implement the raw operations (``_read_text``, ``_write_text``, ``_list``,
    ``_delete``, ``_move``, ``_search``, ``_is_dir``) for a tenant; the public methods add
    the tier's rules for every backend: a document private to another user
    (:func:`~engram.stores.documents.paths.private_to`) reads, lists and searches exactly
    like a missing one and cannot be written, and the user a document is about comes
    from the principal, never from its content.
    """

    # -- what a backend implements ------------------------------------------------------

    @abstractmethod
    def _read_text(self, principal: Principal, path: str) -> str:
        """The full text of the document at ``path`` (NotFoundError if absent)."""

    @abstractmethod
    def _write_text(
        self,
        principal: Principal,
        path: str,
        text: str,
        *,
        overwrite: bool = True,
        expected: str | None = None,
        parsed: ParsedText | None = None,
    ) -> DocumentInfo:
        """Store ``text`` at ``path`` atomically. ConflictError if it exists and not
        ``overwrite``; StaleWriteError if ``expected`` (a :attr:`DocumentInfo.digest`,
        see :func:`digest_of`) is given and the document is missing or has another
        digest: someone else wrote it since it was read. ``parsed``: ``text`` parsed
        (:func:`~engram.stores.documents.markdown.parse_text`), when the caller has it."""

    @abstractmethod
    def _list(self, principal: Principal, pattern: str = "**") -> builtins.list[DocumentInfo]:
        """The tenant's documents whose path matches the glob ``pattern``, sorted by path."""

    @abstractmethod
    def _delete(self, principal: Principal, path: str) -> int:
        """Delete a document or a whole directory; returns how many documents went."""

    @abstractmethod
    def _move(self, principal: Principal, source: str, target: str) -> None:
        """Rename a document or directory; ConflictError if ``target`` exists."""

    @abstractmethod
    def _search(
        self, principal: Principal, query: str, *, k: int = 10, mode: SearchMode = "hybrid"
    ) -> builtins.list[SearchHit]:
        """The tenant's ``k`` best paragraphs for ``query`` (keyword and semantic fused)."""

    @abstractmethod
    def _is_dir(self, principal: Principal, path: str) -> bool:
        """Whether ``path`` names a directory (a prefix of some document's path)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the store can be opened again by using it."""

    def _named_users(
        self, principal: Principal, paths: Sequence[str]
    ) -> Mapping[str, frozenset[str]]:
        """The users the front matter of each document at ``paths`` names (none for one
        that cannot be read). Reads each document; a backend that keeps the front matter
        indexed answers from its index."""
        named: dict[str, frozenset[str]] = {}
        for path in paths:
            try:
                named[path] = frozenset(
                    named_users(parse_text(self._read_text(principal, path)).metadata)
                )
            except (NotFoundError, SerializationError):
                continue
        return named

    def _seen(self, principal: Principal, paths: Sequence[str]) -> set[str]:
        """Those of ``paths`` ``principal`` may see: the user's own, and shared ones whose
        front matter names no other user (as :meth:`read_text` decides)."""
        mine = [path for path in dict.fromkeys(paths) if _mine(principal, path)]
        shared = [path for path in mine if private_to(path) is None]
        named = self._named_users(principal, shared) if shared else {}
        return {path for path in mine if named.get(path, frozenset()) <= {principal.user_id}}

    def _one_view(self, principal: Principal) -> AbstractContextManager[None]:
        """Keep the block's view of the tenant's documents still while it checks what
        ``principal`` may see and acts on it (a folder's delete or move, an erasure), so
        it acts on exactly what it checked: a save landing meanwhile is neither seen nor
        touched (files: the tenant's write lock; PostgreSQL: one REPEATABLE READ
        transaction). The default holds nothing."""
        return nullcontext()

    def compact(self) -> bool:
        """Make deleted bytes unrecoverable from storage (merge indexes, vacuum, truncate
        logs); True if the backend did something. The default does nothing."""
        return False

    # -- the tier's operations ----------------------------------------------------------

    def read_text(self, principal: Principal, path: str) -> str:
        """The full text of the document at ``path`` (NotFoundError if absent)."""
        _check_visible(check.principal(principal), path)
        with _missing_as_not_found(path):
            text = self._read_text(principal, path)
        if not visible_to(principal.user_id, path, parse_text(text).metadata):
            raise _not_found(path)
        return text

    def write_text(
        self,
        principal: Principal,
        path: str,
        text: str,
        *,
        overwrite: bool = True,
        expected: str | None = None,
    ) -> DocumentInfo:
        """Store ``text`` at ``path`` atomically (ConflictError if it exists and not
        ``overwrite``; StaleWriteError if ``expected``, the digest read, no longer
        matches). The front matter may name only ``principal`` as its user, and a path
        private to another user cannot be written."""
        check.principal(principal)
        check.text("text", text, blank=True)
        check.flag("overwrite", overwrite)
        check.optional_text("expected", expected)
        parsed = parse_text(text, strict=True)  # (once per write: the backend gets it)
        _check_writable(principal, path, parsed.metadata)
        with self.exclusive(principal, path):
            self._check_not_hidden(principal, path)
            return self._write_text(
                principal, path, text, overwrite=overwrite, expected=expected, parsed=parsed
            )

    def _check_not_hidden(self, principal: Principal, path: str) -> None:
        """AccessDeniedError when a shared ``path`` holds a document hidden from
        ``principal`` (a person saved it naming another user): it is neither replaced nor
        turned into one the writer may then delete."""
        if private_to(path) is not None:
            return
        try:
            stored = parse_text(self._read_text(principal, path)).metadata
        except (NotFoundError, SerializationError, InvalidInputError, PathEscapeError):
            return  # nothing readable there: the write's own checks decide
        if named_users(stored) - {principal.user_id}:
            raise AccessDeniedError(
                f"{path!r} holds another user's document; write under users/{principal.user_id}/"
            )

    def list(self, principal: Principal, pattern: str = "**") -> builtins.list[DocumentInfo]:
        """Documents ``principal`` may see whose path matches the glob ``pattern``."""
        check.principal(principal)
        check.text("pattern", pattern, line=True)
        found = self._list(principal, pattern)
        seen = self._seen(principal, [i.path for i in found])
        return [i for i in found if i.path in seen]

    def delete(self, principal: Principal, path: str) -> int:
        """Delete a document, or every document of a directory that ``principal`` may see;
        returns how many went. What was checked is what goes (:meth:`_one_view`)."""
        _check_visible(check.principal(principal), path)
        with self._one_view(principal):
            if not self._is_dir(principal, path):
                self.read_text(principal, path)  # NotFoundError, the same for another's
                return self._delete(principal, path)
            inside = self._list(principal, f"{path.rstrip('/')}/**")
            seen = self._seen(principal, [i.path for i in inside])
            if _whole(principal, path) and all(i.path in seen for i in inside):
                return self._delete(principal, path)
            return sum(self._delete(principal, i.path) for i in inside if i.path in seen)

    def move(self, principal: Principal, source: str, target: str) -> None:
        """Rename a document or directory; ConflictError if ``target`` exists. Within a
        directory only what ``principal`` may see moves, exactly what was checked."""
        _check_visible(check.principal(principal), source)
        with self._one_view(principal):
            if not self._is_dir(principal, source):
                metadata = parse_text(self.read_text(principal, source)).metadata
                _check_writable(principal, target, metadata)
                self._move(principal, source, target)
                return
            inside = self._list(principal, f"{source.rstrip('/')}/**")
            _check_writable(principal, target, {})
            seen = self._seen(principal, [i.path for i in inside])
            if _whole(principal, source) and all(i.path in seen for i in inside):
                self._move(principal, source, target)
                return
            prefix, into = source.rstrip("/") + "/", target.rstrip("/") + "/"
            for info in (i for i in inside if i.path in seen):
                self.move(principal, info.path, into + info.path[len(prefix) :])

    def about_user(self, principal: Principal) -> builtins.list[Document]:
        """Every document about ``principal``'s user (what an export holds): the user's
        own paths, and each shared document whose front matter names the user, alone or
        beside other users (such a document is hidden from all of them). One that cannot
        be read as text (not UTF-8) is left out; :meth:`erase_user` removes it all the
        same."""
        found = []
        for path in self._about(check.principal(principal)):
            with suppress(NotFoundError, SerializationError):
                parsed = parse_text(self._read_text(principal, path))
                if about(principal.user_id, path, parsed.metadata):
                    found.append(Document(path, parsed.body, parsed.metadata))
        return found

    def erase_user(self, principal: Principal) -> tuple[str, ...]:
        """Delete every document about ``principal``'s user (as :meth:`about_user` finds
        them, unreadable ones included), then the user's folder ``users/<user>/`` with
        whatever the listing leaves out of it (names the path rules refuse); returns the
        paths of the documents deleted. A document naming other users too goes whole."""
        check.principal(principal)
        with self._one_view(principal):
            paths = self._about(principal)
            for path in paths:
                with suppress(NotFoundError):
                    self._delete(principal, path)
            with suppress(NotFoundError):
                self._delete(principal, f"{USERS_DIR}/{principal.user_id}")
        return tuple(paths)

    def _about(self, principal: Principal) -> builtins.list[str]:
        """The paths of the documents about ``principal``'s user, by the index."""
        user, found = principal.user_id, [i.path for i in self._list(principal)]
        named = self._named_users(principal, [p for p in found if private_to(p) is None])
        return [p for p in found if private_to(p) == user or user in named.get(p, ())]

    def search(
        self, principal: Principal, query: str, *, k: int = 10, mode: SearchMode = "hybrid"
    ) -> builtins.list[SearchHit]:
        """The ``k`` best paragraphs for ``query`` among documents ``principal`` may see
        (passages with content: a heading line on its own is never one)."""
        check.principal(principal)
        check.text("query", query, blank=True)
        wanted = check.integer("k", k, minimum=1, maximum=10_000)
        check.choice("mode", mode, ("hybrid", "keyword", "semantic"))
        while True:
            hits = self._search(principal, query, k=wanted, mode=mode)
            seen = self._seen(principal, [h.path for h in hits])
            kept = [h for h in hits if h.path in seen and not is_heading(h.text)]
            if len(kept) >= k or len(hits) < wanted:
                return kept[:k]
            wanted *= 4

    def is_dir(self, principal: Principal, path: str) -> bool:
        """Whether ``path`` names a directory ``principal`` may see."""
        return _mine(check.principal(principal), path) and self._is_dir(principal, path)

    def read(self, principal: Principal, path: str) -> Document:
        """The document at ``path`` with its front matter parsed (one that cannot be read,
        written by hand, counts as body text)."""
        parsed = parse_text(self.read_text(principal, path))
        return Document(path, parsed.body, parsed.metadata)

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
        check.text("content", content, blank=True)
        check.mapping("metadata", metadata)
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
        """Whether a document or directory ``principal`` may see exists at ``path``."""
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


def _not_found(path: str) -> NotFoundError:
    return NotFoundError(f"no document {path!r}")


@contextmanager
def _missing_as_not_found(path: str) -> Iterator[None]:
    """One answer for a missing document on every backend (and for another user's)."""
    try:
        yield
    except NotFoundError:
        raise _not_found(path) from None


def _mine(principal: Principal, path: str) -> bool:
    return visible_to(principal.user_id, path)


def _check_visible(principal: Principal, path: str) -> None:
    if not _mine(principal, path):
        raise _not_found(path)


def _whole(principal: Principal, folder: str) -> bool:
    """Whether ``folder`` may be deleted or moved at once, files the listing leaves out
    included: it is ``principal``'s own, or no path under it can be another user's."""
    owner = private_to(folder)
    return owner == principal.user_id or (
        owner is None and split_path(folder)[0] not in (USERS_DIR, *USER_FILE_DIRS)
    )


def _check_writable(principal: Principal, path: str, metadata: Mapping[str, Any]) -> None:
    owner = private_to(path)
    if owner is not None and owner != principal.user_id:
        raise AccessDeniedError(f"{path!r} is another user's; write under users/<you>/ instead")
    others = named_users(metadata) - {principal.user_id}
    if others:
        raise InvalidInputError(
            "a document's user comes from the principal writing it, not its front matter: "
            f"{sorted(others)} named by {principal.user_id!r}"
        )
    if owner is None and named_users(metadata):
        raise InvalidInputError(
            f"{path!r} is shared by the tenant; a document for one user goes under "
            f"users/{principal.user_id}/ or user-profiles/{principal.user_id}.md"
        )


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


def sync(
    source: DocumentStore,
    target: DocumentStore,
    principal: Principal,
    *,
    progress: Callable[[int], Callable[[int], object]] | None = None,
) -> SyncReport:
    """Make ``target`` hold exactly ``source``'s documents: upsert changed, drop deleted.

    ``progress(total)`` (the number of source documents) returns a callback that is
    called with ``1`` after each one."""
    have = {info.path: info.digest for info in target.list(principal)}
    upserted, unchanged = [], 0
    listed = source.list(principal)
    update = progress(len(listed)) if progress is not None else None
    for info in listed:
        if have.pop(info.path, None) == info.digest:
            unchanged += 1
        else:
            target.write_text(principal, info.path, source.read_text(principal, info.path))
            upserted.append(info.path)
        if update is not None:
            update(1)
    for path in sorted(have):
        target.delete(principal, path)
    return SyncReport(tuple(upserted), tuple(sorted(have)), unchanged)
