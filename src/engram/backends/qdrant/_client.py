"""Where a Qdrant cold store lives: URL forms, opening clients, holding namespaces.

- ``qdrant://host:6333`` (``qdrant+https://…`` for TLS): a Qdrant server over REST; the
  API key, if any, comes from ``ENGRAM_QDRANT_API_KEY``.
- ``qdrant+local:///relative/folder`` or ``qdrant+local:////absolute/folder``: qdrant-client's
  embedded local mode (a Python re-implementation of Qdrant's search over numpy, persisted
  in one SQLite file per collection). Like ``sqlite:///``, three slashes then the path.
- ``qdrant+edge:///folder``: Qdrant Edge (``qdrant-edge-py``), Qdrant's own engine
  embedded in the process (:mod:`~engram.backends.qdrant._edge`).

Any form takes ``?collection=NAME`` (default ``engram_cold``).

Local mode and Edge lock their folder for one process (an OS file lock). Within a
process, every store opened on one folder shares one client (:func:`open_local`),
guarded by one lock; a second process gets :class:`FolderInUseError`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from engram.errors import BackendError, ConfigError, ConflictError, MissingDependencyError

try:
    from qdrant_client import QdrantClient, models
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("Qdrant needs: pip install 'engram[qdrant]'") from exc

DEFAULT_COLLECTION = "engram_cold"
API_KEY_ENV = "ENGRAM_QDRANT_API_KEY"
LEASE_SECONDS = 30.0
"""How long a server-side namespace lock lasts unless released (a crashed holder's
lock is taken over after this)."""


LOCAL_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA secure_delete=ON",
)


class FolderInUseError(ConflictError):
    """Another process holds this local Qdrant folder (local mode is single-process)."""


@dataclass(frozen=True, slots=True)
class Location:
    """A parsed Qdrant URL: a local ``path`` or a server ``url``, and the collection."""

    collection: str = DEFAULT_COLLECTION
    path: Path | None = None
    url: str | None = None
    edge: bool = False

    @property
    def local(self) -> bool:
        return self.path is not None


def parse(raw: str) -> Location:
    """The :class:`Location` a ``qdrant…://`` URL names, or :class:`ConfigError`."""
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query, keep_blank_values=True)
    collection = (query.get("collection") or [DEFAULT_COLLECTION])[0]
    if not collection.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"a Qdrant collection name is letters, digits, - and _: {collection!r}")
    if scheme in ("qdrant+local", "qdrant+edge"):
        rest = raw.split("://", 1)[1].split("?", 1)[0]
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(f"{scheme} URL needs a folder: {scheme}:///folder, got {raw!r}")
        return Location(collection, path=Path(rest[1:]), edge=scheme == "qdrant+edge")
    if scheme in ("qdrant", "qdrant+http", "qdrant+https"):
        if not parts.hostname:
            raise ConfigError(f"a Qdrant server URL needs a host: qdrant://host:6333, got {raw!r}")
        http = "https" if scheme == "qdrant+https" else "http"
        return Location(collection, url=f"{http}://{parts.hostname}:{parts.port or 6333}")
    raise ConfigError(
        f"unknown Qdrant URL form {raw!r}: use qdrant://host:port, qdrant+local:///path "
        "or qdrant+edge:///path"
    )


@dataclass
class Handle:
    """One client and the lock its calls take (local mode is not thread-safe)."""

    client: Any
    """A ``QdrantClient``, or an :class:`~engram.backends.qdrant._edge.EdgeClient`."""
    folder: Path | None = None
    """The embedded folder (None: a server)."""
    edge: bool = False
    users: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def local(self) -> bool:
        return self.folder is not None

    def calls(self) -> AbstractContextManager[Any]:
        return self.lock if self.local else nullcontext()

    def reopen(self) -> None:
        """Close and open the local client again (it reloads its folder)."""
        assert self.folder is not None
        self.client.close()
        self.client = _local_client(self.folder, self.edge)

    def tune(self) -> None:
        """Local mode: put each collection's SQLite file in WAL mode with
        ``synchronous=NORMAL`` and ``secure_delete``. qdrant-client commits every point
        on its own, and with the default rollback journal each commit waits for the disk
        (11 ms a point here); in WAL mode a commit survives a crash of the process (not
        of the machine: the last commits may be lost on power loss). A client without
        the expected internals is left as it is (slower, as safe)."""
        if self.folder is None or self.edge:
            return
        for collection in getattr(self.client._client, "collections", {}).values():
            conn = getattr(getattr(collection, "storage", None), "storage", None)
            if isinstance(conn, sqlite3.Connection):
                for pragma in LOCAL_PRAGMAS:
                    conn.execute(pragma)


_LOCAL: dict[Path, Handle] = {}
_LOCAL_GUARD = threading.Lock()


def open_local(path: Path, edge: bool = False) -> Handle:
    """The process's client of the folder ``path`` (opened on first use, shared after)."""
    folder = path.resolve()
    with _LOCAL_GUARD:
        handle = _LOCAL.get(folder)
        if handle is None:
            handle = Handle(_local_client(folder, edge), folder, edge)
            _LOCAL[folder] = handle
        elif handle.edge != edge:
            raise ConfigError(f"the Qdrant folder {folder} is already open in another mode")
        handle.users += 1
        return handle


def _in_use(folder: Path) -> FolderInUseError:
    return FolderInUseError(
        f"the Qdrant folder {folder} is open in another process; an embedded Qdrant is "
        "single-process (use a Qdrant server for several processes)"
    )


def _local_client(folder: Path, edge: bool) -> Any:
    if edge:
        from engram.backends.qdrant._edge import EdgeClient, FolderLocked

        try:
            return EdgeClient(folder)
        except FolderLocked as exc:
            raise _in_use(folder) from exc
        except (OSError, RuntimeError) as exc:
            raise BackendError(f"cannot open the Qdrant Edge folder {folder}: {exc}") from exc
    try:
        return QdrantClient(path=str(folder))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise _in_use(folder) from exc
        raise BackendError(f"cannot open the Qdrant folder {folder}: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot open the Qdrant folder {folder}: {exc}") from exc


def release_local(path: Path) -> None:
    """One user fewer of the folder's client; the last one closes it (and its file lock)."""
    folder = path.resolve()
    with _LOCAL_GUARD:
        handle = _LOCAL.get(folder)
        if handle is None:
            return
        handle.users -= 1
        if handle.users <= 0:
            del _LOCAL[folder]
            with handle.lock:
                handle.client.close()


def open_server(url: str) -> Handle:
    """A client of the Qdrant server at ``url`` (REST)."""
    return Handle(QdrantClient(url=url, api_key=os.environ.get(API_KEY_ENV) or None))


class Leases:
    """Namespace locks every process of a Qdrant server respects: a lock is a point
    written with ``update_mode=insert_only`` (only one writer can create it) and an
    owner token, deleted on release; a lease older than :data:`LEASE_SECONDS` (its
    holder died) is taken over. Reentrant per thread."""

    def __init__(self, handle: Handle, collection: str, timeout: float = 60.0) -> None:
        self._handle = handle
        self._collection = collection
        self._timeout = timeout
        self._held = threading.local()

    def setup(self) -> None:
        client = self._handle.client
        if not client.collection_exists(self._collection):
            client.create_collection(self._collection, vectors_config={})

    @contextmanager
    def hold(self, name: str) -> Iterator[None]:
        depth: dict[str, int] = self._held.__dict__.setdefault("depth", {})
        if depth.get(name):
            depth[name] += 1
            try:
                yield
            finally:
                depth[name] -= 1
            return
        token = self._acquire(name)
        depth[name] = 1
        try:
            yield
        finally:
            depth[name] = 0
            self._release(name, token)

    def _acquire(self, name: str) -> str:
        token, lock_id = uuid.uuid4().hex, str(uuid.uuid5(uuid.NAMESPACE_URL, name))
        deadline, pause = time.monotonic() + self._timeout, 0.002
        while time.monotonic() < deadline:
            owner = self._try(lock_id, token)
            if owner == token:
                return token
            if owner is not None and owner["until"] < time.time():
                self._delete(lock_id, owner["owner"])
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
        raise BackendError(f"timed out waiting for the Qdrant lock of {name!r}")

    def _try(self, lock_id: str, token: str) -> Any:
        point = models.PointStruct(
            id=lock_id, vector={}, payload={"owner": token, "until": time.time() + LEASE_SECONDS}
        )
        client = self._handle.client
        client.upsert(self._collection, [point], update_mode=models.UpdateMode.INSERT_ONLY)
        found = client.retrieve(self._collection, [lock_id], with_payload=True)
        if not found or found[0].payload is None:
            return None
        return token if found[0].payload["owner"] == token else found[0].payload

    def _release(self, lock_id_name: str, token: str) -> None:
        self._delete(str(uuid.uuid5(uuid.NAMESPACE_URL, lock_id_name)), token)

    def _delete(self, lock_id: str, owner: str) -> None:
        only = models.Filter(
            must=[
                models.HasIdCondition(has_id=[lock_id]),
                models.FieldCondition(key="owner", match=models.MatchValue(value=owner)),
            ]
        )
        self._handle.client.delete(self._collection, models.FilterSelector(filter=only))
