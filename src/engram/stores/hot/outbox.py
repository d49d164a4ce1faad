"""The publication outbox every backend keeps alike: what a row is, how it is keyed, and
what a ledger does.

Publishing is an agent's one external side effect (the Market Analyst's). The publish
step writes its row under a key derived from the principal, the thread and the draft's
hash, with insert-if-absent, so a resumed or re-run step (after a crash between the write
and the checkpoint) finds the row and never publishes twice. The rows hold user content
(the published reports), so a ledger is an erasure participant of the memory layer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from engram._principal import Principal


def draft_hash(draft: str) -> str:
    """The SHA-256 of a draft: what a human approves and what the outbox is keyed on."""
    return hashlib.sha256(draft.encode("utf-8")).hexdigest()


def idempotency_key(principal: Principal, thread_id: str, digest: str) -> str:
    """One key per (principal, thread, exact draft)."""
    raw = "\x1f".join((principal.tenant_id, principal.user_id, thread_id, digest))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class PublishedReport:
    """One row of the outbox; ``created`` is False when the key was already there."""

    idempotency_key: str
    thread_id: str
    draft_hash: str
    approved_by: str
    report: str
    published_at: str
    created: bool = False


class Outbox(Protocol):
    """A publication ledger (SQLite file, PostgreSQL table): publish once, list, erase."""

    @property
    def name(self) -> str:
        """Its key in an erasure report (``"outbox"``)."""
        ...

    def publish(
        self, principal: Principal, thread_id: str, report: str, approved_by: str
    ) -> PublishedReport:
        """Publish ``report`` once: a second call with the same draft returns the first row."""
        ...

    def publications(self, principal: Principal) -> list[PublishedReport]:
        """Every report published for ``principal``, oldest first."""
        ...

    def erase(self, principal: Principal) -> dict[str, int]:
        """Delete every report published for ``principal``, bytes included; counts."""
        ...
