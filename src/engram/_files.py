"""Folders and files engram creates on disk: its owner's alone, whatever the umask.

A folder engram creates (the home, every folder below it, any missing parent) is made
0700 and a file 0600; SQLite's ``-wal`` and ``-shm`` take the mode of their database, so
creating the database first covers them. What already exists is left as it is: engram
never widens (nor narrows) a mode it did not set.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def private_folder(path: str | Path) -> Path:
    """``path`` as a folder, created (with any missing parent) with :data:`FOLDER_MODE`."""
    path = Path(path)
    if path.is_dir():
        return path
    if path.parent != path:
        private_folder(path.parent)
    try:
        os.mkdir(path, FOLDER_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise
    return path


def private_file(path: str | Path) -> Path:
    """``path``, created empty with :data:`FILE_MODE` (and its folder with
    :func:`private_folder`) unless it exists; an existing file is not opened."""
    path = Path(path)
    if path.exists():
        return path
    private_folder(path.parent)
    with suppress(FileExistsError):  # (another process made it first: theirs is as private)
        os.close(os.open(path, _CREATE, FILE_MODE))
    return path
