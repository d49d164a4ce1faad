"""The review queue: writes held by the poisoning guard, waiting for a person.

One Markdown document per user, ``review/<user_id>.md``, one line per held write
(``- <time> | <reason> | origin <JSON> | <text, PII redacted>``: :func:`entry_line`).
The memory layer queues held facts here and the memory-tool commands queue held
documents; :meth:`engram.memory.Memory.held_for_review` lists them. Never recalled.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engram._principal import Principal
from engram.stores.documents.contract import DocumentStore, SearchHit
from engram.stores.documents.markdown import render, split_front_matter

REVIEW_DIR = "review/"
"""Where writes held by the poisoning guard wait for a human; never recalled."""

_HEADER = "# Writes held for review\n\n"
_ORIGIN = "origin "


def entry_line(when: str, reason: str, origin: Mapping[str, Any], text: str) -> str:
    """One queue line, ``- <when> | <reason> | origin <JSON> | <text>``, that splits back
    into exactly these parts (:func:`entry_parts`) whatever the caller's strings hold: the
    JSON of ``origin`` (thread, checkpoint, slot, tags, or a document's path) is written
    with no space or "|" in it (escaped), the reason with none of "|", and the text last."""
    where = json.dumps(dict(origin), sort_keys=True, separators=(",", ":"))
    where = where.replace(" ", "\\u0020").replace("|", "\\u007c")
    said = " ".join(reason.replace("|", "/").split())
    return f"- {when} | {said} | {_ORIGIN}{where} | {' '.join(text.split())}"


def entry_parts(line: str) -> tuple[str, str, dict[str, Any], str] | None:
    """``(when, reason, origin, text)`` of a queue line written by :func:`entry_line`
    (without its ``- ``), or None for any other line."""
    parts = line.split(" | ", 3)
    if len(parts) != 4 or not parts[2].startswith(_ORIGIN):
        return None
    try:
        origin = json.loads(parts[2][len(_ORIGIN) :])
    except ValueError:
        return None
    return (parts[0], parts[1], origin, parts[3]) if isinstance(origin, dict) else None


def in_review(parts: Sequence[str]) -> bool:
    """Whether the path of ``parts`` (its components, as :func:`split_path` gives them) is
    the review queue's folder or in it: held text waits there for a person, so no tool a
    model drives reads, lists, searches or writes it."""
    return bool(parts) and parts[0] == REVIEW_DIR.rstrip("/")


def outside_review(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The search hits a model may be shown: never the review queue's (the tier has already
    left out other users' documents)."""
    return [hit for hit in hits if not in_review(hit.path.split("/"))]


def review_path(principal: Principal) -> str:
    """The review document of ``principal``'s user."""
    return f"{REVIEW_DIR}{principal.user_id}.md"


def queue_held(store: DocumentStore, principal: Principal, *entries: str) -> None:
    """Append entry lines (already redacted), in order, to the user's review document, as
    one read-modify-write that another writer cannot lose (:meth:`DocumentStore.update_text`)."""
    if not entries:
        return
    meta = {"user_id": principal.user_id, "kind": "review"}
    lines = "".join(" ".join(entry.split()) + "\n" for entry in entries)

    def append(text: str | None) -> str:
        body = _HEADER if text is None else split_front_matter(text)[1]
        return render(body.rstrip("\n") + "\n" + lines, meta)

    store.update_text(principal, review_path(principal), append)


def held_entries(store: DocumentStore, principal: Principal) -> list[str]:
    """The user's queued entries, oldest first (without the leading ``- ``)."""
    path = review_path(principal)
    if not store.exists(principal, path):
        return []
    body = store.read(principal, path).content
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]


def remove_entry(store: DocumentStore, principal: Principal, entry: str) -> bool:
    """Take one queued ``entry`` (as :func:`held_entries` returns it) out of the user's
    review document, atomically; ``False`` when it is not there (anymore)."""
    path = review_path(principal)
    if not store.exists(principal, path):
        return False
    found: list[bool] = []

    def drop(text: str | None) -> str:
        found.clear()
        body = _HEADER if text is None else split_front_matter(text)[1]
        lines = body.splitlines()
        target = f"- {entry}"
        if target in lines:
            lines.remove(target)
            found.append(True)
        meta = {"user_id": principal.user_id, "kind": "review"}
        return render("\n".join(lines) + "\n", meta)

    store.update_text(principal, path, drop)
    return bool(found)
