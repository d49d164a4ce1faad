"""Runs retrieval methods over a benchmark and aggregates the metrics.

A benchmark is a list of haystacks (one user's memory each) with questions whose
evidence is named in *units*: turn ids for LoCoMo, session ids for LongMemEval
(``unit`` maps a turn id to its unit). Every method is asked once per question for
its top ``depth`` turns; all metrics (recall/all/any@k, nDCG, recall within token
budgets of the rendered context) are computed from that one ranking.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram.eval._context import Packer
from engram.eval._data import Conversation, Question
from engram.eval._methods import Method
from engram.eval._metrics import (
    all_found_at,
    any_found_at,
    dedupe,
    mean,
    ndcg_at,
    recall,
    recall_at,
)
from engram.eval._tokens import TokenCounter

FULL_CONTEXT = "full context"
NO_MEMORY = "no memory"


@dataclass(frozen=True)
class Spec:
    """What to measure on one benchmark."""

    name: str
    ks: tuple[int, ...]
    ndcg_k: tuple[int, ...]
    budgets: tuple[int, ...]
    groups: Callable[[Question], Sequence[str]]
    unit: Callable[[str], str] = lambda turn_id: turn_id
    depth: int = 300


@dataclass
class _Tally:
    """Per-question metric values, bucketed by group."""

    values: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, groups: Sequence[str], metrics: dict[str, float]) -> None:
        for group in groups:
            for name, value in metrics.items():
                self.values[group][name].append(value)

    def summary(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for group in sorted(self.values):
            metrics = self.values[group]
            row = {name: mean(vals) for name, vals in sorted(metrics.items())}
            row["n"] = len(next(iter(metrics.values())))
            out[group] = row
        return out


def question_metrics(
    spec: Spec, ranked_turns: Sequence[str], evidence: Sequence[str], packer: Packer
) -> dict[str, float]:
    """Every metric of one question from one ranking of turns."""
    units = dedupe(spec.unit(t) for t in ranked_turns)
    out: dict[str, float] = {}
    for k in spec.ks:
        out[f"recall@{k}"] = recall_at(units, evidence, k)
        out[f"all@{k}"] = all_found_at(units, evidence, k)
        out[f"any@{k}"] = any_found_at(units, evidence, k)
    for k in spec.ndcg_k:
        out[f"ndcg@{k}"] = ndcg_at(units, evidence, k)
    for budget in spec.budgets:
        packed = packer.pack(ranked_turns, budget)
        out[f"recall@{budget}tok"] = recall([spec.unit(t) for t in packed.ids], evidence)
        out[f"tokens@{budget}tok"] = float(packed.tokens)
    return out


def _scored(conversation: Conversation) -> Iterator[Question]:
    return (q for q in conversation.questions if q.evidence)


def run(
    spec: Spec,
    haystacks: Sequence[Conversation],
    methods: Sequence[Method],
    counter: TokenCounter,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """Evaluate ``methods`` on ``haystacks``; returns the result document (timings apart)."""
    tallies = {m.name: _Tally() for m in methods}
    timings: dict[str, dict[str, float]] = {
        m.name: {"index_s": 0.0, "search_s": 0.0} for m in methods
    }
    full_tokens: list[float] = []
    for conversation in haystacks:
        packer = Packer(conversation.turns, counter)
        questions = list(_scored(conversation))
        full_tokens.extend(float(packer.full().tokens) for _ in questions)
        for method in methods:
            _run_one(
                spec,
                method,
                conversation,
                questions,
                packer,
                tallies[method.name],
                timings[method.name],
            )
            if progress is not None:
                progress(len(questions))
    return _document(spec, methods, tallies, full_tokens, timings)


def _run_one(
    spec: Spec,
    method: Method,
    conversation: Conversation,
    questions: Sequence[Question],
    packer: Packer,
    tally: _Tally,
    timing: dict[str, float],
) -> None:
    start = time.perf_counter()
    method.index(conversation.id, conversation.turns)
    timing["index_s"] += time.perf_counter() - start
    for question in questions:
        start = time.perf_counter()
        ranked = method.search(conversation.id, question, spec.depth)
        timing["search_s"] += time.perf_counter() - start
        tally.add(spec.groups(question), question_metrics(spec, ranked, question.evidence, packer))


def _document(
    spec: Spec,
    methods: Sequence[Method],
    tallies: dict[str, _Tally],
    full_tokens: Sequence[float],
    timings: dict[str, dict[str, float]],
) -> dict[str, Any]:
    return {
        "benchmark": spec.name,
        "ks": list(spec.ks),
        "budgets": list(spec.budgets),
        "methods": {m.name: tallies[m.name].summary() for m in methods},
        "reference": {
            FULL_CONTEXT: {"recall": 1.0, "tokens": mean(full_tokens)},
            NO_MEMORY: {"recall": 0.0, "tokens": 0.0},
        },
        "timings": {name: {k: round(v, 3) for k, v in t.items()} for name, t in timings.items()},
    }
