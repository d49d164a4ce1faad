"""Evaluation harness: retrieval quality on LoCoMo / LongMemEval and a memory-lifecycle suite.

``engram eval locomo|longmemeval|lifecycle`` is the command-line skin of
:func:`run_benchmark` and :func:`run_lifecycle`.
"""

from engram.eval._api import BENCHMARKS, run_benchmark, run_lifecycle_file, write_lifecycle
from engram.eval._data import (
    Conversation,
    Question,
    Turn,
    default_data_root,
    load_locomo,
    load_longmemeval,
)
from engram.eval._report import markdown, write

__all__ = [
    "BENCHMARKS",
    "Conversation",
    "Question",
    "Turn",
    "default_data_root",
    "load_locomo",
    "load_longmemeval",
    "markdown",
    "run_benchmark",
    "run_lifecycle_file",
    "write",
    "write_lifecycle",
]
