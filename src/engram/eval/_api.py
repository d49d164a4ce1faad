"""One call per benchmark run: load, build the methods, evaluate, annotate."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import _validate as check
from engram.errors import ConfigError
from engram.eval._answers import AnswerSettings, Recorder, answer_total, merge, pick, run_answers
from engram.eval._benchmarks import load
from engram.eval._lifecycle import (
    Target,
    lifecycle_markdown,
    load_scenarios,
    run_scenarios,
    shipped_scenarios,
)
from engram.eval._methods import BM25Method, CachedEmbedder, LangGraphDenseMethod, Method
from engram.eval._runner import run
from engram.eval._tokens import default_counter
from engram.recall import Embedder, embedder_from_name

if TYPE_CHECKING:
    from engram.stores.cold import TurnRule

BENCHMARKS = ("locomo", "longmemeval")
LIFECYCLE_TARGETS = {"memory": "engram.Memory", "cold": "engram.stores.cold.LongTermStore"}


def build_methods(
    shared: Embedder,
    backend: str = "sqlite",
    turn_context: int = 0,
    turn_context_rule: TurnRule = "always",
) -> list[Method]:
    """The line-up: BM25, LangGraph dense and engram (its cold tier on ``backend``),
    sharing one embedder; with ``turn_context``, also the default recall over turns
    embedded with that many turns before them (as ``turn_context_rule`` says)."""
    methods: list[Method] = [BM25Method(), LangGraphDenseMethod(shared)]
    methods.extend(_engram_methods(shared, backend))
    if turn_context:
        methods.append(_turn_context_method(shared, backend, turn_context, turn_context_rule))
    return methods


def _turn_context_method(embedder: Embedder, backend: str, turns: int, rule: TurnRule) -> Method:
    from engram.eval._engram import EngramColdMethod, turn_context_name

    name = turn_context_name(turns, rule)
    return EngramColdMethod(
        embedder, name=name, backend=backend, turn_context=turns, turn_context_rule=rule
    )


def _cached(name: str, folder: Path | None) -> CachedEmbedder:
    inner = embedder_from_name(name, threads=2)
    path = None if folder is None else folder / f"embeddings-{name}.npz"
    return CachedEmbedder(inner, path)


def _engram_methods(embedder: Embedder, backend: str) -> Sequence[Method]:
    from engram.eval._engram import (
        NO_DIALOGUE_ROW,
        EngramColdMethod,
        EngramContextMethod,
        hybrid_method,
    )
    from engram.recall import NO_DIALOGUE

    return (
        EngramColdMethod(embedder, backend=backend),
        hybrid_method(embedder, backend),
        EngramContextMethod(embedder, boost=NO_DIALOGUE, name=NO_DIALOGUE_ROW, backend=backend),
        EngramContextMethod(embedder, backend=backend),
    )


def run_benchmark(
    benchmark: str,
    *,
    data: Path | None = None,
    limit: int | None = None,
    embedder: str = "hash",
    cache: Path | None = None,
    progress: Callable[[int], Callable[[int], Any]] | None = None,
    haystacks: str | None = None,
    backend: str = "sqlite",
    answers: AnswerSettings | None = None,
    turn_context: int = 0,
    turn_context_rule: TurnRule = "always",
    distractors: int = 0,
    depth: int | None = None,
    assistant_turns: bool = False,
) -> dict[str, Any]:
    """Evaluate every method on ``benchmark``; ``progress(total)`` returns an update callback.

    ``backend`` names the cold-tier backend engram's methods run on (``sqlite``,
    ``qdrant`` in local mode, ``memory``), each in a temporary folder.

    ``cache`` names a folder where embeddings persist between runs; ``haystacks`` keeps
    only some haystacks by index (``"5-9"``: LoCoMo's conversations 5 to 9).
    ``turn_context`` adds a row: the default recall over turns embedded with that many
    turns before them in their session (``LongTermStore.put_many(turn_context=...)``),
    as ``turn_context_rule`` says. ``distractors`` (LoCoMo) puts the turns of that many
    other conversations in each conversation's memory too. ``depth`` is how many turns each
    method ranks per question (the ``k`` of each recall; default: the benchmark's, 300).
    ``assistant_turns`` (LongMemEval) stores the assistant's replies as turns too, beside
    the user's: a chat log of two speakers.

    With ``answers``, a chat model also answers each question from the context each
    method recalled, and a judge model grades it (see :mod:`engram.eval._answers`).
    """
    spec, chosen = load(benchmark, data, limit, haystacks, distractors, assistant_turns)
    if depth is not None:
        spec = replace(spec, depth=check.integer("depth", depth, minimum=1))
    model = _cached(embedder, cache)
    methods = build_methods(model, backend, turn_context, turn_context_rule)
    counter = default_counter()
    total = len(methods) * sum(1 for c in chosen for q in c.questions if q.evidence)
    recorders = _recorders(methods, answers)
    if answers is not None:
        total += answer_total(chosen, len(recorders))
    update = progress(total) if progress is not None else None
    try:
        result = run(spec, chosen, [recorders.get(m.name, m) for m in methods], counter, update)
        if answers is not None:
            graded = run_answers(spec, chosen, list(recorders.values()), counter, answers, update)
            merge(result, graded, answers)
    finally:
        for method in methods:
            method.close()
        model.save()
    result["config"] = {
        "embedder": embedder,
        "embedding_model": model.model_id,
        "token_counter": counter.name,
        "limit": limit,
        "haystack_selection": haystacks,
        "backend": backend,
        "turn_context": turn_context,
        "turn_context_rule": turn_context_rule,
        "distractors": distractors,
        "assistant_turns": assistant_turns,
        "depth": spec.depth,
        "questions": sum(1 for c in chosen for q in c.questions if q.evidence),
        "haystacks": len(chosen),
        "turns": sum(len(c.turns) for c in chosen),
    }
    return result


def _recorders(methods: Sequence[Method], answers: AnswerSettings | None) -> dict[str, Recorder]:
    """A recorder for each method whose context is answered from."""
    if answers is None:
        return {}
    return {m.name: Recorder(m) for m in pick(methods, answers.methods)}


def run_lifecycle_file(
    path: Path | None = None,
    *,
    limit: int | None = None,
    embedder: str = "hash",
    url: str | None = None,
    target: str = "memory",
    progress: Callable[[int], Callable[[int], Any]] | None = None,
) -> dict[str, Any]:
    """Play the scenarios of ``path`` (default: the shipped ones) on engram.

    ``target`` is ``memory`` (the memory layer, :class:`engram.Memory`) or ``cold``
    (the cold tier's ``LongTermStore``, on ``url`` or a temporary SQLite file).
    """
    from engram.eval._targets import ColdTarget, MemoryTarget

    scenarios = load_scenarios(path or shipped_scenarios())[:limit]
    model = _cached(embedder, None)
    update = progress(len(scenarios)) if progress is not None else None
    if target not in LIFECYCLE_TARGETS:
        raise ConfigError(f"unknown target {target!r}; choose one of {LIFECYCLE_TARGETS}")
    factory: Callable[[], Target] = (
        (lambda: MemoryTarget(model)) if target == "memory" else (lambda: ColdTarget(model, url))
    )
    result = run_scenarios(scenarios, factory, update)
    result["config"] = {
        "scenarios": str(path or "shipped"),
        "embedder": embedder,
        "embedding_model": model.model_id,
        "target": LIFECYCLE_TARGETS[target],
    }
    return result


def write_lifecycle(result: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write ``lifecycle.json`` and ``lifecycle.md`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "lifecycle.json", out_dir / "lifecycle.md"]
    paths[0].write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    paths[1].write_text(lifecycle_markdown(result), encoding="utf-8")
    return paths
