"""The erasure audit: who erased which user, when, and how much went (counts only).

:func:`open_audit` opens the log of a home (SQLite, in the same database file as the
cold tier) or of a PostgreSQL URL (row-level security on the tenant, as every other
table). A record never holds erased content: ids, a time and counts.
"""

from engram.stores.audit._open import open_audit
from engram.stores.audit.contract import ErasureLog, ErasureRecord, counts_of, record_of

__all__ = ["ErasureLog", "ErasureRecord", "counts_of", "open_audit", "record_of"]
