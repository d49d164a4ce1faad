"""What an audit backend implements: :class:`ErasureLog` over :class:`ErasureRecord` rows.

Every method names the tenant, so a backend scopes each statement to it (PostgreSQL:
row-level security on ``tenant_id``). Records are appended, never changed.
"""

from __future__ import annotations

import getpass
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True, slots=True)
class ErasureRecord:
    """One erasure: the user erased, who asked, when, and counts by kind."""

    tenant_id: str
    user_id: str
    actor: str
    """The key id (``egk_...``) or JWT subject that asked for it; ``cli:<login>``,
    ``mcp:<login>`` or ``library:<login>`` for a local caller."""
    erased_at: datetime
    counts: Mapping[str, int]
    """``facts``, ``versions``, ``documents``, ``threads`` and each participant's counts."""


def counts_of(report: Mapping[str, Any]) -> dict[str, int]:
    """The counts of an erasure report's JSON (``ErasureReport.to_json()``): no content."""
    facts = report.get("facts", {})
    counts = {
        "facts": int(facts.get("keys", 0)),
        "versions": int(facts.get("versions", 0)),
        "documents": len(report.get("documents", ())),
        "threads": len(report.get("threads", ())),
    }
    for name, found in report.get("participants", {}).items():
        for kind, count in found.items():
            counts[f"{name}.{kind}"] = int(count)
    return counts


def record_of(
    tenant_id: str, user_id: str, actor: str, report: Mapping[str, Any], when: datetime
) -> ErasureRecord:
    """The audit record of an erasure report's JSON (``ErasureReport.to_json()``)."""
    return ErasureRecord(tenant_id, user_id, actor, when, counts_of(report))


def local_actor(channel: str) -> str:
    """``channel:login``, the operating-system user running this process, as the erasure
    log names who asked (``channel`` alone when the environment has no user name)."""
    try:
        return f"{channel}:{getpass.getuser()}"
    except (KeyError, OSError):  # no user name in this environment
        return channel


class ErasureLog(ABC):
    """The erasure records of every tenant; each call acts inside one tenant."""

    @abstractmethod
    def add(self, record: ErasureRecord) -> None:
        """Append ``record``."""

    @abstractmethod
    def list(self, tenant_id: str, limit: int = 200) -> list[ErasureRecord]:
        """The newest ``limit`` records of ``tenant_id``, newest first."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (idempotent)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
