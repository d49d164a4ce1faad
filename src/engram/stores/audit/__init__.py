"""The erasure audit: who erased which user, when, and how much went (counts only).

:func:`open_audit` opens the log of a home (SQLite, in the same database file as the
cold tier) or of a PostgreSQL URL (row-level security on the tenant, as every other
table). A record never holds erased content: ids, a time and counts. A
:class:`~engram.memory.Memory` keeps its log beside its cold tier (:func:`audit_beside`)
and records each whole-user ``forget`` there itself.
"""

from engram.stores.audit._open import audit_beside, open_audit, setup_audit
from engram.stores.audit.contract import (
    ErasureLog,
    ErasureRecord,
    counts_of,
    local_actor,
    record_of,
)

__all__ = [
    "ErasureLog",
    "ErasureRecord",
    "audit_beside",
    "counts_of",
    "local_actor",
    "open_audit",
    "record_of",
    "setup_audit",
]
