"""Evaluation harness: retrieval quality on LoCoMo / LongMemEval, a memory-lifecycle suite
and the poisoning benchmark of the write policy.

``engram eval locomo|longmemeval|lifecycle|poisoning`` is the command-line skin of
:func:`run_benchmark`, :func:`run_lifecycle` and :func:`run_poisoning`.
"""

from engram.eval._answers import AnswerSettings, chat_model
from engram.eval._api import BENCHMARKS, run_benchmark, run_lifecycle_file, write_lifecycle
from engram.eval._data import (
    Conversation,
    Question,
    Turn,
    default_data_root,
    load_locomo,
    load_longmemeval,
)
from engram.eval._poisoning import load_corpus as load_poisoning_corpus
from engram.eval._poisoning import run_poisoning
from engram.eval._report import markdown, write

__all__ = [
    "BENCHMARKS",
    "AnswerSettings",
    "Conversation",
    "Question",
    "Turn",
    "chat_model",
    "default_data_root",
    "load_locomo",
    "load_longmemeval",
    "load_poisoning_corpus",
    "markdown",
    "run_benchmark",
    "run_lifecycle_file",
    "run_poisoning",
    "write",
    "write_lifecycle",
]
