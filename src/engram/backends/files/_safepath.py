"""Root-confined file operations: validated relative paths, descriptor-relative, no-follow.

Every operation starts from an open descriptor of the root and walks one component at
a time with ``os.open(name, O_DIRECTORY | O_NOFOLLOW, dir_fd=parent)``; the leaf is
opened, created, renamed or unlinked relative to its parent's descriptor, never by a
path string. A symbolic link anywhere (existing, or swapped in after a check) makes
the open fail with ``ELOOP`` instead of being followed, so no path can reach outside.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from engram._files import FILE_MODE, FOLDER_MODE, private_folder
from engram.errors import (
    BackendError,
    ConflictError,
    EngramError,
    InvalidInputError,
    NotFoundError,
    PathEscapeError,
)
from engram.stores.documents.paths import MAX_DEPTH, check_component

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
_TEMP_PREFIX, _TEMP_SUFFIX = ".engram-", ".tmp"


def _translate(exc: OSError, dir_fd: int, name: str) -> Exception:
    if exc.errno == errno.ELOOP or _is_link(dir_fd, name):
        return PathEscapeError(f"{name!r} is a symbolic link; links are never followed")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return NotFoundError(f"{name!r} does not exist")
    if exc.errno == errno.EISDIR:
        return InvalidInputError(f"{name!r} is a directory")
    return BackendError(f"file system error on {name!r}: {exc.strerror}")


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_child(dir_fd: int, name: str, *, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise NotFoundError(f"directory {name!r} does not exist") from None
    except OSError as exc:
        if create and exc.errno == errno.ENOTDIR and not _is_link(dir_fd, name):
            raise InvalidInputError(f"{name!r} is a file, not a directory") from exc
        raise _translate(exc, dir_fd, name) from exc
    with suppress(FileExistsError):
        os.mkdir(name, FOLDER_MODE, dir_fd=dir_fd)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc


_CASE_BLIND: dict[str, bool] = {}


def ignores_case(base: Path) -> bool:
    """Whether the file system holding ``base`` treats names differing only in case as
    one (macOS and Windows by default): probed once per folder and process with a file
    of its own, created and removed; ``False`` when ``base`` does not exist yet."""
    key = os.fspath(base)
    if key not in _CASE_BLIND:
        if not base.is_dir():
            return False
        probe = f"{_TEMP_PREFIX}case-{secrets.token_hex(4)}{_TEMP_SUFFIX}"
        try:
            fd = os.open(base / probe, _TEMP_FLAGS, FILE_MODE)
        except OSError as exc:
            raise BackendError(f"cannot write in {key!r}: {exc.strerror}") from exc
        os.close(fd)
        try:
            _CASE_BLIND[key] = (base / probe.upper()).exists()
        finally:
            with suppress(FileNotFoundError):
                os.unlink(base / probe)
    return _CASE_BLIND[key]


@contextmanager
def open_root(base: Path, tenant: str, *, create: bool) -> Iterator[int]:
    """A descriptor of ``base/tenant`` (``base`` is trusted configuration)."""
    if create:
        private_folder(base)
    try:
        base_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        raise NotFoundError(f"document root {str(base)!r} does not exist") from None
    except OSError as exc:
        raise BackendError(f"cannot open document root {str(base)!r}: {exc.strerror}") from exc
    try:
        fd = _open_child(base_fd, tenant, create=create)
    finally:
        os.close(base_fd)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def open_dir(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory ``parts`` below ``root_fd``, walked without links."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            child = _open_child(fd, part, create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def lstat(dir_fd: int, name: str) -> os.stat_result | None:
    """``stat`` of ``name`` itself (links not followed), or None when absent."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc


def read_bytes(dir_fd: int, name: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``name`` and its ``stat`` (same descriptor)."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc
    try:
        info = os.fstat(fd)
        _check_regular(name, info)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), info
    except EngramError:
        raise
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc
    finally:
        os.close(fd)


def _check_regular(name: str, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInputError(f"{name!r} is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"{name!r} is not a regular file")
    if info.st_nlink > 1:
        raise PathEscapeError(f"{name!r} has several hard links; it may live outside")


def write_atomic(dir_fd: int, name: str, data: bytes, *, overwrite: bool) -> None:
    """Write ``data`` to ``name``: temp file, fsync, rename (or link), fsync the directory.

    A writer killed half-way leaves its temp file behind: :func:`remove_temps` takes
    those away."""
    temp = f"{_TEMP_PREFIX}{secrets.token_hex(8)}{_TEMP_SUFFIX}"
    try:
        fd = os.open(temp, _TEMP_FLAGS, FILE_MODE, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(fd)
        _publish(dir_fd, temp, name, overwrite=overwrite)
        os.fsync(dir_fd)
    except EngramError:
        raise
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)


def _publish(dir_fd: int, temp: str, name: str, *, overwrite: bool) -> None:
    existing = lstat(dir_fd, name)
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        raise PathEscapeError(f"{name!r} is a symbolic link; links are never followed")
    if overwrite:
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise ConflictError(f"{name!r} already exists") from None


def remove(dir_fd: int, name: str) -> int:
    """Delete the file or directory tree ``name``; returns how many files went."""
    info = lstat(dir_fd, name)
    if info is None:
        raise NotFoundError(f"{name!r} does not exist")
    if stat.S_ISLNK(info.st_mode):
        raise PathEscapeError(f"{name!r} is a symbolic link; links are never followed")
    try:
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(name, dir_fd=dir_fd)
            return 1
        with open_dir(dir_fd, (name,)) as child:
            count = sum(1 for _ in walk_files(child))
        shutil.rmtree(name, dir_fd=dir_fd)
    except EngramError:
        raise
    except OSError as exc:
        raise _translate(exc, dir_fd, name) from exc
    os.fsync(dir_fd)
    return count


def rename(src_fd: int, src: str, dst_fd: int, dst: str) -> None:
    """Move ``src`` to ``dst`` (both relative to their directories); never overwrites."""
    info = lstat(src_fd, src)
    if info is None:
        raise NotFoundError(f"{src!r} does not exist")
    if stat.S_ISLNK(info.st_mode):
        raise PathEscapeError(f"{src!r} is a symbolic link; links are never followed")
    if lstat(dst_fd, dst) is not None:
        raise ConflictError(f"{dst!r} already exists")
    try:
        if stat.S_ISDIR(info.st_mode):
            os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        else:
            os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
            os.unlink(src, dir_fd=src_fd)
    except FileExistsError:
        raise ConflictError(f"{dst!r} already exists") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise InvalidInputError("cannot move a directory into itself") from exc
        raise _translate(exc, src_fd, src) from exc
    os.fsync(dst_fd)
    if dst_fd != src_fd:
        os.fsync(src_fd)


def walk_files(
    dir_fd: int, prefix: str = "", skipped: list[str] | None = None
) -> Iterator[tuple[str, os.stat_result]]:
    """Every visible regular file below ``dir_fd`` with its ``stat``, by the path the path
    rules give it; links are skipped. A name that is not NFC is walked by its NFC
    spelling where that opens the same file (a file system that folds the two), else
    left out; so is a folder too deep to hold a document. What is left out goes to
    ``skipped`` (a folder's path ends with ``/``)."""
    with os.scandir(dir_fd) as entries:
        found = sorted(entries, key=lambda entry: entry.name)
    for entry in found:
        if not _visible(entry.name):
            continue
        name = _rule_name(dir_fd, entry)
        is_dir = entry.is_dir(follow_symlinks=False)
        if name is None or (is_dir and prefix.count("/") + 2 > MAX_DEPTH):
            if skipped is not None:
                skipped.append(prefix + entry.name + ("/" if is_dir else ""))
            continue
        if is_dir:
            try:
                child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                yield from walk_files(child, f"{prefix}{name}/", skipped)
            finally:
                os.close(child)
        elif entry.is_file(follow_symlinks=False):
            yield prefix + name, entry.stat(follow_symlinks=False)


def _rule_name(dir_fd: int, entry: os.DirEntry[str]) -> str | None:
    """The name the path rules give ``entry``: its own when NFC; its NFC spelling when
    that opens this very file; else None (it cannot be addressed)."""
    nfc = unicodedata.normalize("NFC", entry.name)
    if nfc == entry.name:
        return nfc
    try:
        found = os.stat(nfc, dir_fd=dir_fd, follow_symlinks=False)
        own = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return nfc if (found.st_dev, found.st_ino) == (own.st_dev, own.st_ino) else None


def remove_temps(dir_fd: int) -> int:
    """Delete the temp files of :func:`write_atomic` below ``dir_fd`` (call it only while
    no writer can be half-way: they would lose theirs); returns how many went."""
    try:
        return _remove_temps(dir_fd)
    except OSError as exc:
        raise BackendError(f"cannot remove leftover temp files: {exc.strerror}") from exc


def _remove_temps(dir_fd: int) -> int:
    with os.scandir(dir_fd) as entries:
        found = list(entries)
    removed = 0
    for entry in found:
        if _is_temp(entry.name) and entry.is_file(follow_symlinks=False):
            with suppress(FileNotFoundError):
                os.unlink(entry.name, dir_fd=dir_fd)
                removed += 1
        elif _visible(entry.name) and entry.is_dir(follow_symlinks=False):
            with suppress(NotFoundError, PathEscapeError), open_dir(dir_fd, (entry.name,)) as child:
                removed += _remove_temps(child)
    if removed:
        os.fsync(dir_fd)
    return removed


def _is_temp(name: str) -> bool:
    return name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX)


def _visible(name: str) -> bool:
    try:
        check_component(name, name)
    except (InvalidInputError, PathEscapeError):
        return False
    return True
