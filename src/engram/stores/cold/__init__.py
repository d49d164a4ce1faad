"""Cold tier: long-term memory (facts about a user that outlive a thread).

Backends (``engram.backends.<engine>.cold``) implement :mod:`engram.stores.cold.contract`
on the records of :mod:`engram.stores.cold.records`; ``_open.py`` is the one table from
URL scheme to backend.
"""

from engram.stores.cold._consolidation import (
    Action,
    Existing,
    Fact,
    LLMResolver,
    Resolution,
    Resolver,
    RuleResolver,
)
from engram.stores.cold._open import aopen_store, backend_for, open_store, setup_store
from engram.stores.cold._store import LongTermStore, Options
from engram.stores.cold._sweeper import Sweeper
from engram.stores.cold._turns import TurnRule
from engram.stores.cold.contract import (
    ChangeSet,
    Closure,
    ColdBackend,
    NewVersion,
    Scan,
    Vector,
)
from engram.stores.cold.records import (
    NAMESPACE_SEPARATOR,
    EraseCounts,
    ForgetReport,
    MemoryRecord,
    Namespace,
    NewFact,
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
    "Action",
    "ChangeSet",
    "Closure",
    "ColdBackend",
    "EraseCounts",
    "Existing",
    "Fact",
    "ForgetReport",
    "LLMResolver",
    "LongTermStore",
    "MemoryRecord",
    "Namespace",
    "NewFact",
    "NewVersion",
    "Options",
    "Provenance",
    "Recalled",
    "Resolution",
    "Resolver",
    "RuleResolver",
    "Scan",
    "Sensitivity",
    "Source",
    "Sweeper",
    "TurnRule",
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
    "setup_store",
    "split_namespace",
    "to_epoch",
    "utc",
    "validate_namespace",
]
