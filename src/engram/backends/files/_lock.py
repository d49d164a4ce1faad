"""The write lock of a tenant's document root: ``flock`` on ``<root>/.engram.lock``.

Every write, delete and move of the file store holds it, and so does a whole
read-modify-write (:meth:`~engram.stores.documents.DocumentStore.update_text`), so
writers of one tenant take turns across threads and processes. ``flock`` belongs
to an open file description: each holder opens the file itself (two threads of one
process exclude each other too), and the kernel releases it when its holder dies,
even by SIGKILL. Hence, whoever holds the lock knows that no engram writer is
half-way through a write, which is when leftover temp files may be removed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from engram._files import FILE_MODE
from engram.errors import BackendError

LOCK_NAME = ".engram.lock"
_FLAGS = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)


def _open(root_fd: int) -> int:
    try:
        return os.open(LOCK_NAME, _FLAGS, FILE_MODE, dir_fd=root_fd)  # flock needs no write access
    except OSError as exc:
        raise BackendError(f"cannot open the document lock: {exc.strerror}") from exc


def _take(fd: int) -> bool:
    """Take the lock if nobody holds it; False if somebody does."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in _BUSY:
            return False
        raise BackendError(f"cannot lock the documents: {exc.strerror}") from exc
    return True


@contextmanager
def exclusive(root_fd: int, timeout: float) -> Iterator[None]:
    """Hold the root's lock, waiting up to ``timeout`` seconds for it."""
    fd = _open(root_fd)
    try:
        deadline, pause = time.monotonic() + timeout, 0.0005
        while not _take(fd):
            if time.monotonic() >= deadline:
                raise BackendError(f"the documents stayed locked by another writer for {timeout}s")
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def if_free(root_fd: int) -> Iterator[bool]:
    """Hold the root's lock if nobody does; yields whether it is held."""
    fd = _open(root_fd)
    try:
        yield _take(fd)
    finally:
        os.close(fd)
