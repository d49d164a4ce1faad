"""The document tier's path rules, shared by every document backend and tool.

A document path is relative to the tenant's root, ``/``-separated, at most
:data:`MAX_DEPTH` components of visible names: no ``..``, no absolute or drive paths,
no NUL, control or invisible characters, no hidden (leading-dot) names. Names are
NFC-normalised, so two spellings of one name are one document on every backend.

Who may see a document follows from its path alone (:func:`private_to`): a user's own
folder and files are private to that user, everything else is the tenant's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

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
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"path is not valid Unicode: {path!r}") from None
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


# --- who may see a document ------------------------------------------------------------

USERS_DIR = "users"
"""``users/<user>/...``: documents written for one user (briefs, notes) live here."""
USER_FILE_DIRS = ("user-profiles", "review")
"""``<dir>/<user>.md``: the user's profile, the user's queue of writes held for review."""
USER_KEYS = ("user_id", "user", "users")
"""Front-matter keys that name the user a document is about."""


def private_to(path: str) -> str | None:
    """The user a path is private to (``None``: the tenant's, shared by its users).

    ``users/<user>/**``, ``user-profiles/<user>.md`` and ``review/<user>.md`` belong to
    ``<user>``; every other path (conventions, research, learnings...) is shared.
    """
    parts = split_path(path, allow_root=True)
    if len(parts) >= 2 and parts[0] == USERS_DIR:
        return parts[1]
    if len(parts) == 2 and parts[0] in USER_FILE_DIRS and parts[1].endswith(".md"):
        name = parts[1][: -len(".md")]
        return None if name == "README" else name
    return None


def named_users(metadata: Mapping[str, Any]) -> set[str]:
    """The users a document's front matter says it is about."""
    found: set[str] = set()
    for key in USER_KEYS:
        value = metadata.get(key)
        for name in value if isinstance(value, list) else [value]:
            if name is not None:
                found.add(str(name))
    return found


def visible_to(user_id: str, path: str, metadata: Mapping[str, Any] | None = None) -> bool:
    """Whether ``user_id`` may see the document: a shared path (whose front matter names
    no other user: documents written before private paths), or one of the user's own."""
    owner = private_to(path)
    if owner is not None:
        return owner == user_id
    return metadata is None or named_users(metadata) <= {user_id}


def about(user_id: str, path: str, metadata: Mapping[str, Any]) -> bool:
    """Whether a document is about ``user_id`` (exported and erased with the user)."""
    return private_to(path) == user_id or user_id in named_users(metadata)
