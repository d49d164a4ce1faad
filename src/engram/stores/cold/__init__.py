"""Cold tier: long-term memory (facts about a user that outlive a thread).

The record types and the backend interface live here; backends in
``engram.backends.<engine>.cold``.
"""

from engram.stores.cold._backend import (
    ChangeSet,
    Closure,
    ColdBackend,
    NewVersion,
    Scan,
    Vector,
)
from engram.stores.cold._open import aopen_store, backend_for, open_store
from engram.stores.cold._records import (
    NAMESPACE_SEPARATOR,
    EraseCounts,
    ForgetReport,
    MemoryRecord,
    Namespace,
    Provenance,
    Recalled,
    Sensitivity,
    Source,
    View,
    WriteAction,
    WriteResult,
    from_epoch,
    in_prefix,
    join_namespace,
    split_namespace,
    to_epoch,
    utc,
    validate_namespace,
)
from engram.stores.cold._store import LongTermStore, Options
from engram.stores.cold._sweeper import Sweeper

__all__ = [
    "NAMESPACE_SEPARATOR",
    "ChangeSet",
    "Closure",
    "ColdBackend",
    "EraseCounts",
    "ForgetReport",
    "LongTermStore",
    "MemoryRecord",
    "Namespace",
    "NewVersion",
    "Options",
    "Provenance",
    "Recalled",
    "Scan",
    "Sensitivity",
    "Source",
    "Sweeper",
    "Vector",
    "View",
    "WriteAction",
    "WriteResult",
    "aopen_store",
    "backend_for",
    "from_epoch",
    "in_prefix",
    "join_namespace",
    "open_store",
    "split_namespace",
    "to_epoch",
    "utc",
    "validate_namespace",
]
