"""Erase a user and keep the audit record: who asked, when, how much went (no content)."""

from __future__ import annotations

from datetime import UTC, datetime

from engram._principal import Principal
from engram.memory import ErasureReport, Memory
from engram.stores.audit import ErasureLog, record_of


def erase_user(
    memory: Memory, audit: ErasureLog | None, principal: Principal, actor: str
) -> ErasureReport:
    """:meth:`Memory.forget` everything about ``principal``, recorded as asked by
    ``actor`` (the key id or JWT subject) in the memory's own erasure log; in ``audit``
    only when the memory has none (one record per erasure, whichever log holds it)."""
    report = memory.forget(principal, actor=actor)
    if audit is not None and memory.erasure_log is None:
        when = datetime.now(UTC)
        audit.add(record_of(*principal.namespace, actor, report.to_json(), when))
    return report
