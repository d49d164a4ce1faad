"""The review queue: writes held by the poisoning guard, waiting for a person.

One Markdown document per user, ``review/<user_id>.md``, one line per held write
(``- <time> | <reason> | <where it came from> | <text, PII redacted>``). The memory
layer queues held facts here and the memory-tool commands queue held documents;
:meth:`engram.memory.Memory.held_for_review` lists them. Never recalled.
"""

from __future__ import annotations

from engram._principal import Principal
from engram.stores.documents.contract import DocumentStore
from engram.stores.documents.markdown import render, split_front_matter

REVIEW_DIR = "review/"
"""Where writes held by the poisoning guard wait for a human; never recalled."""

_HEADER = "# Writes held for review\n\n"


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
