"""The embedded document store: Markdown files under one root per tenant, plus an index.

Layout: ``<root>/<tenant_id>/README.md``, ``PROGRESS.md``, ``research/…``. The files are
the truth (people read, diff and edit them); the SQLite index under the engram home is
a cache that each search or listing brings up to date by ``stat`` alone, reading only
files whose size or mtime changed.

Writers of one tenant take turns on the root's lock (:mod:`engram.backends.files._lock`).
The first time a store touches a tenant, and on :meth:`FileDocumentStore.compact`, it
removes the temp files of writers killed half-way, which hold whole documents: only
while it holds the lock, so never a live writer's.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from engram._principal import Principal
from engram.backends.files._index import DocumentIndex, IndexedFile
from engram.backends.files._lock import exclusive, if_free
from engram.backends.files._safepath import (
    ignores_case,
    lstat,
    open_dir,
    open_root,
    read_bytes,
    remove,
    remove_temps,
    rename,
    walk_files,
    write_atomic,
)
from engram.config import DEFAULT_HOME, AppRole, default_documents_root
from engram.errors import (
    BackendError,
    EngramError,
    InvalidInputError,
    NotFoundError,
    PathEscapeError,
    SerializationError,
    StaleWriteError,
)
from engram.recall import Embedder
from engram.stores.documents import (
    DocumentInfo,
    DocumentOptions,
    DocumentStore,
    SearchHit,
    SearchMode,
)
from engram.stores.documents.markdown import (
    Paragraph,
    ParsedText,
    check_glob,
    glob_regex,
    parse_text,
)
from engram.stores.documents.paths import join, named_users, split_path


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What a refresh of the index did: files stat-ed, read, re-indexed, dropped, and the
    files (folders: ending in ``/``) a person saved where the path rules cannot address
    them (a name not in NFC beside no file of its NFC spelling, a folder nested deeper
    than a document may be), left out of the index."""

    checked: int
    read: int
    reindexed: int
    removed: int
    skipped: tuple[str, ...] = ()


def _parse(data: bytes, parsed: ParsedText | None = None) -> tuple[list[Paragraph], str]:
    """(paragraphs, the users its front matter names) of a file's bytes (``parsed`` when
    the writer has parsed them); a file that is not UTF-8 has none (its digest is its
    SHA-256 like any other's)."""
    if parsed is None:
        try:
            parsed = parse_text(data.decode("utf-8"))
        except UnicodeDecodeError:
            return [], ""
    return parsed.paragraphs(), " ".join(sorted(named_users(parsed.metadata)))


@contextmanager
def _about(path: str) -> Iterator[None]:
    """Name the whole document path in errors raised by a component-level operation."""
    try:
        yield
    except EngramError as exc:
        raise type(exc)(f"{path}: {exc}") from exc


class FileDocumentStore(DocumentStore):
    """Documents as Markdown files under ``root/<tenant_id>/``, indexed in SQLite.

    ``root`` defaults to ``<home>/documents`` and the index to
    ``<home>/index/documents.db``. Nothing is created until a write or ``init``.
    Searches and listings first bring the index up to date (one ``stat`` per file);
    ``refresh_interval`` (seconds) lets them skip that when the last refresh is more
    recent, at the price of noticing hand edits that much later. A writer waits up to
    ``lock_timeout`` seconds for the tenant's lock (BackendError after).
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        home: str | Path = DEFAULT_HOME,
        index_path: str | Path | None = None,
        embedder: Embedder | None = None,
        refresh_interval: float = 0.0,
        lock_timeout: float = 30.0,
    ) -> None:
        self._base = Path(root) if root is not None else default_documents_root(home)
        index = Path(index_path) if index_path is not None else Path(home) / "index/documents.db"
        self._index = DocumentIndex(index, embedder)
        self._embedded: set[str] = set()
        self._refresh_interval = refresh_interval
        self._refreshed: dict[str, float] = {}
        self._lock_timeout = lock_timeout
        self._holding = threading.local()
        """Tenants whose lock this thread holds: (re)entered without waiting on itself."""
        self._recovered: set[str] = set()

    def _case_safe(self, principal: Principal) -> None:
        """On a file system that ignores case, ids with capitals are refused: "Acme" and
        "acme" (or users "Bob" and "bob") would share a folder, and see each other's
        documents."""
        ids = (principal.tenant_id, principal.user_id)
        if any(i != i.lower() for i in ids) and ignores_case(self._base):
            raise InvalidInputError(
                f"{self._base} is on a file system that ignores case: documents need "
                f"lower-case tenant and user ids (got {principal.tenant_id!r}, "
                f"{principal.user_id!r}), or a PostgreSQL document store"
            )

    def root(self, principal: Principal) -> Path:
        """The directory holding ``principal``'s tenant's documents."""
        return self._base / principal.tenant_id

    def close(self) -> None:
        self._index.close()

    def compact(self) -> bool:
        """Merge the index and remove every tenant's leftover temp files."""
        if self._base.is_dir():
            for tenant in sorted(p.name for p in self._base.iterdir() if p.is_dir()):
                with suppress(NotFoundError, PathEscapeError, InvalidInputError):
                    self._recover(tenant, wait=True)
        return self._index.compact()

    def _recover(self, tenant: str, *, wait: bool = False) -> None:
        """Remove the temp files writers killed half-way left in ``tenant``'s folders,
        while holding its lock (a live writer holds it while its temp file exists);
        once per tenant unless ``wait`` (then also waiting for the lock)."""
        if (tenant in self._recovered and not wait) or tenant in self._tenants_held():
            return
        with open_root(self._base, tenant, create=False) as root:
            lock = exclusive(root, self._lock_timeout) if wait else if_free(root)
            with lock as held:
                if held is False:
                    return  # a writer is busy: the next call tries again
                remove_temps(root)
        self._recovered.add(tenant)

    def _try_recover(self, tenant: str) -> None:
        """:meth:`_recover` if it can: a missing root has nothing to recover, and a
        folder this process may not write (read-only) is still readable."""
        with suppress(NotFoundError, BackendError):
            self._recover(tenant)

    def _tenants_held(self) -> set[str]:
        held: set[str] | None = getattr(self._holding, "tenants", None)
        if held is None:
            held = self._holding.tenants = set()
        return held

    @contextmanager
    def exclusive(self, principal: Principal, path: str) -> Iterator[None]:
        """The tenant's write lock (reentrant in one thread; the root is created)."""
        tenant, held = principal.tenant_id, self._tenants_held()
        if tenant in held:
            yield
            return
        self._try_recover(tenant)
        with (
            open_root(self._base, tenant, create=True) as root,
            exclusive(root, self._lock_timeout),
        ):
            held.add(tenant)
            try:
                yield
            finally:
                held.discard(tenant)

    @contextmanager
    def _parent(
        self, principal: Principal, path: str, parts: tuple[str, ...], *, create: bool = False
    ) -> Iterator[tuple[int, int]]:
        """(root descriptor, descriptor of the directory holding ``parts[-1]``)."""
        self._case_safe(principal)
        with (
            _about(path),
            open_root(self._base, principal.tenant_id, create=create) as root,
            open_dir(root, parts[:-1], create=create) as parent,
        ):
            yield root, parent

    def _read_text(self, principal: Principal, path: str) -> str:
        self._try_recover(principal.tenant_id)
        parts = split_path(path)
        with self._parent(principal, path, parts) as (_, parent):
            data, _ = read_bytes(parent, parts[-1])
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SerializationError(f"{path}: not UTF-8 text") from exc

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
        parts = split_path(path)
        data = text.encode("utf-8")
        with (
            self.exclusive(principal, path),
            self._parent(principal, path, parts, create=True) as (_, parent),
        ):
            if expected is not None:
                _check_digest(parent, parts[-1], expected, path)
            write_atomic(parent, parts[-1], data, overwrite=overwrite)
            info = lstat(parent, parts[-1])
            if info is None:  # removed by hand right after the write
                raise NotFoundError(f"{path}: removed while being written")
            record = self._index_bytes(principal.tenant_id, join(parts), info, data, parsed)
        return DocumentInfo(record.path, record.size, record.digest)

    def _index_bytes(
        self,
        tenant: str,
        path: str,
        info: os.stat_result,
        data: bytes,
        parsed: ParsedText | None = None,
    ) -> IndexedFile:
        chunks, users = _parse(data, parsed)
        sha = hashlib.sha256(data).hexdigest()  # (= the digest of its text)
        record = IndexedFile(path, info.st_mtime_ns, len(data), sha, sha, users)
        self._index.put(tenant, record, chunks)
        return record

    def _list(self, principal: Principal, pattern: str = "**") -> builtins.list[DocumentInfo]:
        regex = glob_regex(check_glob(pattern))
        self._maybe_refresh(principal)
        files = self._index.files(principal.tenant_id)
        return [
            DocumentInfo(f.path, f.size, f.digest)
            for f in sorted(files.values(), key=lambda f: f.path)
            if regex.match(f.path)
        ]

    def _one_view(self, principal: Principal) -> AbstractContextManager[None]:
        return self.exclusive(principal, "")

    def _named_users(
        self, principal: Principal, paths: Sequence[str]
    ) -> Mapping[str, frozenset[str]]:
        self._maybe_refresh(principal)
        named = self._index.named(principal.tenant_id)
        return {path: named[path] for path in paths if path in named}

    def _is_dir(self, principal: Principal, path: str) -> bool:
        parts = split_path(path, allow_root=True)
        try:
            with self._parent(principal, path, (*parts, "")):
                return True
        except NotFoundError:
            return False

    def _delete(self, principal: Principal, path: str) -> int:
        parts = split_path(path)
        with self.exclusive(principal, path), self._parent(principal, path, parts) as (_, parent):
            count = remove(parent, parts[-1])
        self._forget(principal.tenant_id, join(parts))
        return count

    def _move(self, principal: Principal, source: str, target: str) -> None:
        src, dst = split_path(source), split_path(target)
        with (
            self.exclusive(principal, source),
            self._parent(principal, source, src) as (root, src_fd),
            _about(target),
            open_dir(root, dst[:-1], create=True) as dst_fd,
        ):
            rename(src_fd, src[-1], dst_fd, dst[-1])
        self._forget(principal.tenant_id, join(src))
        self.refresh(principal)

    def _forget(self, tenant: str, path: str) -> None:
        gone = [p for p in self._index.files(tenant) if p == path or p.startswith(path + "/")]
        self._index.drop(tenant, gone)

    def _search(
        self, principal: Principal, query: str, *, k: int = 10, mode: SearchMode = "hybrid"
    ) -> builtins.list[SearchHit]:
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}")
        self._maybe_refresh(principal)
        return self._index.search(principal.tenant_id, query, k, mode)

    def _maybe_refresh(self, principal: Principal) -> None:
        last = self._refreshed.get(principal.tenant_id)
        if last is None or time.monotonic() - last >= self._refresh_interval:
            self.refresh(principal)

    def refresh(self, principal: Principal) -> RefreshReport:
        """Bring the index up to date: ``stat`` every file, read only the changed ones."""
        self._case_safe(principal)
        tenant = principal.tenant_id
        self._refreshed[tenant] = time.monotonic()
        self._try_recover(tenant)
        known = self._index.stats(tenant)
        checked = read = reindexed = 0
        skipped: list[str] = []
        try:
            with open_root(self._base, tenant, create=False) as root:
                for path, info in list(walk_files(root, skipped=skipped)):
                    checked += 1
                    if known.pop(path, None) == (info.st_mtime_ns, info.st_size):
                        continue
                    read += 1
                    reindexed += self._refresh_one(root, tenant, path)
        except NotFoundError:
            pass
        self._index.drop(tenant, list(known))
        if tenant not in self._embedded:  # vectors of another model: once per process
            self._index.embed_stale(tenant)
            self._embedded.add(tenant)
        return RefreshReport(checked, read, reindexed, len(known), tuple(skipped))

    def _refresh_one(self, root: int, tenant: str, path: str) -> int:
        parts = tuple(path.split("/"))
        try:
            with open_dir(root, parts[:-1]) as parent:
                data, info = read_bytes(parent, parts[-1])
        except (NotFoundError, PathEscapeError, InvalidInputError):
            return 0  # changed under us; the next refresh sees it
        sha = hashlib.sha256(data).hexdigest()
        old = self._index.record(tenant, path)
        if old is not None and old.sha256 == sha:
            record = IndexedFile(path, info.st_mtime_ns, len(data), sha, old.digest, old.users)
            self._index.touch(tenant, record)
            return 0
        self._index_bytes(tenant, path, info, data)
        return 1


def _check_digest(parent: int, name: str, expected: str, path: str) -> None:
    """StaleWriteError unless ``name`` exists with the digest ``expected``."""
    try:
        data, _ = read_bytes(parent, name)
    except NotFoundError:
        raise StaleWriteError(f"{path}: removed since it was read") from None
    if hashlib.sha256(data).hexdigest() != expected:
        raise StaleWriteError(f"{path}: changed since it was read")


def open_store(location: str, options: DocumentOptions) -> FileDocumentStore:
    """The Markdown files under the directory ``location`` (the tier's ``files`` engine)."""
    home = options.home if options.home is not None else DEFAULT_HOME
    return FileDocumentStore(
        location, home=home, index_path=options.index_path, embedder=options.embedder
    )


def setup(admin_location: str, role: AppRole | None) -> str:
    """Nothing to set up: the folders and the index are created on first write."""
    return admin_location
