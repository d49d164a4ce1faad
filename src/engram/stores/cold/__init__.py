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

__all__ = [
    "NAMESPACE_SEPARATOR",
    "ChangeSet",
    "Closure",
    "ColdBackend",
    "EraseCounts",
    "ForgetReport",
    "MemoryRecord",
    "Namespace",
    "NewVersion",
    "Provenance",
    "Recalled",
    "Scan",
    "Sensitivity",
    "Source",
    "Vector",
    "View",
    "WriteAction",
    "WriteResult",
    "from_epoch",
    "in_prefix",
    "join_namespace",
    "split_namespace",
    "to_epoch",
    "utc",
    "validate_namespace",
]
