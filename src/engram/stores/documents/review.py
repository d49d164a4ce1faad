"""The review queue: writes held by the poisoning guard, waiting for a person.

One Markdown document per user, ``review/<user_id>.md``, one line per held write
(``- <time> | <reason> | <where it came from> | <text, PII redacted>``). The memory
layer queues held facts here and the memory-tool commands queue held documents;
:meth:`engram.memory.Memory.held_for_review` lists them. Never recalled.
"""

from __future__ import annotations

from engram._principal import Principal
from engram.stores.documents.contract import DocumentStore

REVIEW_DIR = "review/"
"""Where writes held by the poisoning guard wait for a human; never recalled."""

_HEADER = "# Writes held for review\n\n"


def review_path(principal: Principal) -> str:
    """The review document of ``principal``'s user."""
    return f"{REVIEW_DIR}{principal.user_id}.md"


def queue_held(store: DocumentStore, principal: Principal, entry: str) -> None:
    """Append one entry line (already redacted) to the user's review document."""
    path = review_path(principal)
    body = store.read(principal, path).content if store.exists(principal, path) else _HEADER
    meta = {"user_id": principal.user_id, "kind": "review"}
    store.write(principal, path, body.rstrip("\n") + "\n" + " ".join(entry.split()) + "\n", meta)


def held_entries(store: DocumentStore, principal: Principal) -> list[str]:
    """The user's queued entries, oldest first (without the leading ``- ``)."""
    path = review_path(principal)
    if not store.exists(principal, path):
        return []
    body = store.read(principal, path).content
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]
