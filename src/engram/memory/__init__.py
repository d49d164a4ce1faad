"""The memory layer: one API over the hot, cold and document tiers.

:class:`Memory` composes the tiers for one :class:`~engram.Principal` at a time:
``recall`` builds a context block within a token budget, ``remember`` writes a
fact through the write policy with its provenance, ``forget`` erases a user from
every tier and ``export`` returns everything engram holds about them.
:class:`AsyncMemory` runs the same code in a worker thread. The layer talks to the
tiers through their public packages (``engram.stores.*``) only.
"""

from engram.memory._layer import DEFAULT_BUDGET, AsyncMemory, Memory
from engram.memory._records import (
    PROFILE_TAGS,
    BranchReport,
    ContextItem,
    ErasureReport,
    ItemKind,
    Observation,
    RecallResult,
    RememberResult,
    ScoreBreakdown,
)
from engram.memory._review import HeldWrite
from engram.memory._tiers import (
    HOME_PARTICIPANTS,
    ErasureParticipant,
    Locations,
    home_participants,
)
from engram.stores.documents.review import REVIEW_DIR

__all__ = [
    "DEFAULT_BUDGET",
    "HOME_PARTICIPANTS",
    "PROFILE_TAGS",
    "REVIEW_DIR",
    "AsyncMemory",
    "BranchReport",
    "ContextItem",
    "ErasureParticipant",
    "ErasureReport",
    "HeldWrite",
    "ItemKind",
    "Locations",
    "Memory",
    "Observation",
    "RecallResult",
    "RememberResult",
    "ScoreBreakdown",
    "home_participants",
]
