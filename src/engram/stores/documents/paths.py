"""The document tier's path rules, shared by every document backend and tool.

A document path is relative to the tenant's root, ``/``-separated, at most
:data:`MAX_DEPTH` components of visible names: no ``..``, no absolute or drive paths,
no NUL, control or invisible characters, no hidden (leading-dot) names. Names are
NFC-normalised, so two spellings of one name are one document on every backend.
"""

from __future__ import annotations

import re
import unicodedata

from engram.errors import InvalidInputError, PathEscapeError

MAX_DEPTH = 32
MAX_COMPONENT_BYTES = 255
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_DRIVE = re.compile(r"^[A-Za-z]:")
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def split_path(path: str, *, allow_root: bool = False) -> tuple[str, ...]:
    """Validate a relative document path and return its components (NFC-normalised).

    ``..``, absolute paths and NUL bytes raise :class:`PathEscapeError`; empty, ``.``,
    hidden (leading dot), control or invisible characters, backslashes and over-long
    names raise :class:`InvalidInputError`. ``""`` or ``"."`` is the root itself when
    ``allow_root``.
    """
    if not isinstance(path, str):
        raise InvalidInputError(f"a path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise PathEscapeError(f"path contains a NUL byte: {path!r}")
    path = unicodedata.normalize("NFC", path)
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        raise PathEscapeError(f"path must be relative to the document root: {path!r}")
    if path in ("", ".", "./") and allow_root:
        return ()
    parts = tuple(path[:-1].split("/") if path.endswith("/") else path.split("/"))
    if len(parts) > MAX_DEPTH:
        raise InvalidInputError(f"path is deeper than {MAX_DEPTH} levels: {path!r}")
    for part in parts:
        check_component(part, path)
    return parts


def check_component(part: str, path: str) -> None:
    """Raise unless ``part`` is a safe, visible file or directory name."""
    if part == "..":
        raise PathEscapeError(f"path must not contain '..': {path!r}")
    if part in ("", "."):
        raise InvalidInputError(f"path has an empty or '.' component: {path!r}")
    if part.startswith("."):
        raise InvalidInputError(f"hidden names (leading '.') are reserved: {path!r}")
    if part != part.strip() or "\\" in part:
        raise InvalidInputError(f"names must not have edge spaces or backslashes: {path!r}")
    if _ASCII_CONTROL.search(part) if part.isascii() else _has_bad_char(part):
        raise InvalidInputError(f"path has control or invisible characters: {path!r}")
    if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
        raise InvalidInputError(f"a name is longer than {MAX_COMPONENT_BYTES} bytes: {path!r}")


def _has_bad_char(part: str) -> bool:
    return any(unicodedata.category(char) in _BAD_CATEGORIES for char in part)


def join(parts: tuple[str, ...]) -> str:
    """The relative path string of ``parts``."""
    return "/".join(parts)
