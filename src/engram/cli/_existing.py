"""Checks that read-only commands only open stores that already exist.

Opening an embedded store creates its file; a command that only reads (status,
history, recall, export, list, search) must not leave an empty database or a new
``.engram`` folder behind. A path that holds no store is a typo or the wrong folder,
so it is reported as :class:`~engram.errors.NotFoundError`, not made into a store.
Server URLs (``postgresql://``, ``redis://``, ``qdrant://``) and ``memory://`` create no
file; a local Qdrant URL (``qdrant+local:///folder``, ``qdrant+edge:///folder``) names a
folder, which must exist.
"""

from __future__ import annotations

from pathlib import Path

from engram.config import parse_url
from engram.errors import NotFoundError

HOME_FILES = ("checkpoints.db", "memory.db", "outbox.db", "documents", "index")
"""What an engram home holds once something has been written to it."""


LOCAL_FOLDER_SCHEMES = ("qdrant+local", "qdrant+edge")
"""URL schemes whose path (``scheme:///relative`` or ``scheme:////absolute``) is a folder."""


def existing_url(url: str, what: str) -> str:
    """``url`` if it names a server, memory, an existing SQLite file or an existing local
    store folder; else an error."""
    parsed = parse_url(url)
    if parsed.path is not None and not parsed.path.is_file():
        raise NotFoundError(f"no {what} at {parsed.path} (nothing was stored there)")
    folder = _local_folder(url)
    if folder is not None and not folder.is_dir():
        raise NotFoundError(f"no {what} at {folder} (nothing was stored there)")
    return url


def _local_folder(url: str) -> Path | None:
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in LOCAL_FOLDER_SCHEMES:
        return None
    path = rest.split("?", 1)[0]
    return Path(path[1:]) if path.startswith("/") and path != "/" else None


def existing_home(home: Path) -> Path:
    """``home`` if it is an engram home something was written to; else an error."""
    if not home.is_dir() or not any((home / name).exists() for name in HOME_FILES):
        raise NotFoundError(f"no engram home at {home} (nothing was stored there; see --home)")
    return home


def existing_folder(path: Path, what: str) -> Path:
    """``path`` if it is a folder; else an error."""
    if not path.is_dir():
        raise NotFoundError(f"no {what} at {path} (nothing was stored there)")
    return path
