"""Crash-test hooks: inert unless their environment variables are set.

``ENGRAM_AGENT_HOLD=<point>`` makes the process write its pid to
``ENGRAM_AGENT_HOLD_FILE`` and block when it reaches ``<point>`` (``tool:N``:
inside the N-th tool call of the run, after its start is traced; ``publish``: right after the
outbox write, before the publish step is checkpointed; ``file``: after publishing, before the
brief is filed and the facts remembered), so a test can SIGKILL it
at a chosen step. ``ENGRAM_AGENT_TRACE=<file>`` appends one line per tool start
and end, so a test can prove that no completed call ran twice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

HOLD_ENV = "ENGRAM_AGENT_HOLD"
HOLD_FILE_ENV = "ENGRAM_AGENT_HOLD_FILE"
TRACE_ENV = "ENGRAM_AGENT_TRACE"
HOLD_SECONDS = 600.0


def hold_if(point: str) -> None:
    """Block at ``point`` when the hold hook names it (for crash tests)."""
    if os.environ.get(HOLD_ENV) != point:
        return
    marker = os.environ.get(HOLD_FILE_ENV)
    if marker:
        partial = Path(marker + ".partial")
        partial.write_text(str(os.getpid()), encoding="utf-8")
        partial.replace(marker)  # atomic: a watcher never reads a half-written pid
    time.sleep(HOLD_SECONDS)


def trace(event: str, call_id: str) -> None:
    """Append ``event call_id`` to the trace file, durably, when tracing is on."""
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{event} {call_id}\n")
        fh.flush()
        os.fsync(fh.fileno())
