"""LangGraph's ``durability`` modes, explained and validated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, get_args

from langgraph.types import Durability

from engram.errors import InvalidInputError

DURABILITY_MODES: Final[Mapping[Durability, str]] = {
    "exit": "write a checkpoint only when the run ends, pauses or fails: fastest, but a crash "
    "mid-run loses every step since the last pause",
    "async": "write each step's checkpoint in the background while the next step runs: a crash "
    "can lose the step in flight (LangGraph's default)",
    "sync": "write each step's checkpoint before the next step starts: slowest, no completed "
    "step is ever lost",
}
"""LangGraph's ``durability`` modes (``graph.invoke(..., durability=...)``), explained."""

DEFAULT_DURABILITY: Final[Durability] = "async"


def check_durability(value: str) -> Durability:
    """Validate a durability mode name (for config files, env vars, CLI options)."""
    for mode in get_args(Durability):
        if value == mode:
            return mode  # type: ignore[no-any-return]
    raise InvalidInputError(
        f"durability must be one of {', '.join(DURABILITY_MODES)}; got {value!r}"
    )
