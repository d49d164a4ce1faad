"""``engram eval``: retrieval benchmarks and the memory-lifecycle suite."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from engram.cli._embedding import embedder_option
from engram.cli._progress import progress_of_total

if TYPE_CHECKING:
    from engram.stores.cold import TurnRule

DEFAULT_OUT = Path("eval-results")

_data = click.option(
    "--data",
    type=click.Path(path_type=Path),
    default=None,
    help="Benchmark file or folder (default: $ENGRAM_EVAL_DATA or ../shared/data).",
)
_limit = click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N questions."
)
_out = click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=True,
    help="Folder for the JSON result, Markdown table and PNG plot.",
)
_embedder = embedder_option("minilm", "Embedder shared by every method.")
_quiet = click.option("--quiet", is_flag=True, help="No progress bar.")
_conversations = click.option(
    "--conversations",
    default=None,
    help="Only these conversations, by index: 0-4, 5-9 or 1,3 (default: all).",
)
_backend = click.option(
    "--backend",
    type=click.Choice(["sqlite", "qdrant", "qdrant-edge", "memory"]),
    default="sqlite",
    show_default=True,
    help="Cold-tier backend of engram's methods, in a temporary folder (qdrant: "
    "qdrant-client's local mode; qdrant-edge: Qdrant Edge).",
)
_distractors = click.option(
    "--distractors",
    type=click.IntRange(0, 9),
    default=0,
    show_default=True,
    help="Each conversation's memory also holds the turns of the next N conversations "
    "(a user whose memory is several conversations long).",
)
_assistant_turns = click.option(
    "--assistant-turns",
    is_flag=True,
    help="Store the assistant's replies as turns too, beside the user's (a chat log of "
    "two speakers; by default the memory holds the user's turns only).",
)
_depth = click.option(
    "--depth",
    type=click.IntRange(1, 1000),
    default=300,
    show_default=True,
    help="Turns each method ranks per question: the k of each recall (10: what a recall "
    "of 10 gets; the token budgets are filled from these turns alone).",
)
_turn_context = click.option(
    "--turn-context",
    type=click.IntRange(0, 16),
    default=0,
    show_default=True,
    help="Also run engram's default recall over turns embedded with this many turns "
    "before them in their session (0: no such row).",
)
_turn_context_rule = click.option(
    "--turn-context-rule",
    type=click.Choice(["always", "shorter"]),
    default="always",
    show_default=True,
    help="Which of that row's turns get their context: every one (always) or only a turn "
    "with fewer words than its context turns on average (shorter).",
)
_cache = click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder keeping embeddings between runs (default: none, embed every run).",
)
_answer_model = click.option(
    "--answer-model",
    default=None,
    metavar="PROVIDER:MODEL",
    help="Also answer each question from the recalled context with this LangChain chat "
    "model (e.g. openai:gpt-4o-mini) and report QA accuracy (default: recall only).",
)
_judge_model = click.option(
    "--judge-model",
    default=None,
    metavar="PROVIDER:MODEL",
    help="Chat model grading each answer CORRECT or WRONG against the gold answer "
    "(default: the answer model).",
)
_answer_budget = click.option(
    "--answer-budget",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Tokens of recalled context the answer model reads.",
)
_answer_method = click.option(
    "--answer-method",
    "answer_methods",
    multiple=True,
    help="Answer only from this method's context (repeatable; default: every method).",
)
_answer_concurrency = click.option(
    "--answer-concurrency",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Model calls in flight at once.",
)


def _answer_options(command: Any) -> Any:
    for option in (
        _answer_concurrency,
        _answer_method,
        _answer_budget,
        _judge_model,
        _answer_model,
    ):
        command = option(command)
    return command


def _answers(
    answer_model: str | None,
    judge_model: str | None,
    answer_budget: int,
    answer_methods: tuple[str, ...],
    answer_concurrency: int,
) -> Any:
    """The answer settings the options ask for (``None``: recall only)."""
    if answer_model is None:
        if judge_model is not None:
            raise click.UsageError("--judge-model needs --answer-model")
        return None
    from engram.eval import AnswerSettings, chat_model

    judge = judge_model or answer_model
    return AnswerSettings(
        chat_model(answer_model),
        chat_model(judge),
        budget=answer_budget,
        methods=answer_methods or None,
        concurrency=answer_concurrency,
        answer_name=answer_model,
        judge_name=judge,
    )


def _report_answers(result: dict[str, Any]) -> None:
    summary = result.get("answers")
    if summary is None:
        return
    click.echo(
        f"answers: {summary['correct']} of {summary['asked']} judged CORRECT, "
        f"{summary['failed']} failed"
    )
    for error, count in summary["errors"].items():
        click.echo(f"  {count}x {error}", err=True)
    if summary["asked"] and summary["failed"] == summary["asked"]:
        raise click.ClickException("every answer failed: no QA accuracy was measured")


def _benchmark(
    name: str,
    *,
    data: Path | None,
    limit: int | None,
    out: Path,
    embedder: str,
    cache: Path | None,
    quiet: bool,
    conversations: str | None = None,
    backend: str = "sqlite",
    turn_context: int = 0,
    turn_context_rule: TurnRule = "always",
    distractors: int = 0,
    depth: int = 300,
    assistant_turns: bool = False,
    **answer_options: Any,
) -> None:
    from engram.eval import run_benchmark, write

    answers = _answers(**answer_options)
    started = time.perf_counter()
    with progress_of_total(name, "q", quiet=quiet) as progress:
        result = run_benchmark(
            name,
            data=data,
            limit=limit,
            embedder=embedder,
            cache=cache,
            progress=progress,
            haystacks=conversations,
            backend=backend,
            answers=answers,
            turn_context=turn_context,
            turn_context_rule=turn_context_rule,
            distractors=distractors,
            depth=depth,
            assistant_turns=assistant_turns,
        )
    result["timings"]["total_s"] = round(time.perf_counter() - started, 1)
    for path in write(result, out, name):
        click.echo(f"wrote {path}")
    click.echo(f"{name}: {result['timings']['total_s']} s")
    _report_answers(result)


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval quality (LoCoMo, LongMemEval) and memory lifecycle correctness."""


@eval_group.command(name="locomo")
@_data
@_limit
@_out
@_embedder
@_cache
@_quiet
@_conversations
@_distractors
@_depth
@_backend
@_turn_context
@_turn_context_rule
@_answer_options
def locomo(**options: Any) -> None:
    """Evidence recall on LoCoMo for engram and the baselines, side by side; with
    --answer-model, QA accuracy graded by a judge model too.

    Example: engram eval locomo --limit 50 --embedder hash --out /tmp/eval
    (held-out half: engram eval locomo --conversations 5-9 --out /tmp/eval-5-9;
    on Qdrant's local mode: engram eval locomo --backend qdrant --out /tmp/eval-qdrant;
    answers: engram eval locomo --answer-model openai:gpt-4o-mini --limit 100)
    """
    _benchmark("locomo", **options)


@eval_group.command(name="longmemeval")
@_data
@_limit
@_out
@_embedder
@_cache
@_quiet
@_depth
@_assistant_turns
@_backend
@_turn_context
@_turn_context_rule
@_answer_options
def longmemeval(**options: Any) -> None:
    """Session recall on the LongMemEval oracle sample (one pooled haystack); with
    --answer-model, QA accuracy graded by a judge model too.

    Example: engram eval longmemeval --embedder minilm --out docs/eval
    (a chat log with the assistant's replies: engram eval longmemeval --assistant-turns)
    """
    _benchmark("longmemeval", **options)


def register(main: click.Group) -> None:
    main.add_command(eval_group)


@eval_group.command(name="lifecycle")
@click.option(
    "--data",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Scenario YAML file or folder (default: the scenarios shipped with engram).",
)
@_limit
@_out
@_embedder
@click.option(
    "--target",
    type=click.Choice(["memory", "cold"]),
    default="memory",
    show_default=True,
    help="engram.Memory (every tier) or the cold tier's LongTermStore alone.",
)
@click.option("--url", default=None, help="Cold-tier URL for --target cold (default: temp SQLite).")
@_quiet
def lifecycle(
    data: Path | None,
    limit: int | None,
    out: Path,
    embedder: str,
    target: str,
    url: str | None,
    quiet: bool,
) -> None:
    """Play remember/recall/forget scenarios over simulated time; pass/fail per scenario.

    Example: engram eval lifecycle --data my-scenarios.yaml --embedder hash --out /tmp/life
    """
    from engram.eval import run_lifecycle_file, write_lifecycle

    with progress_of_total("lifecycle", "q", quiet=quiet) as progress:
        result = run_lifecycle_file(
            data, limit=limit, embedder=embedder, url=url, target=target, progress=progress
        )
    for path in write_lifecycle(result, out):
        click.echo(f"wrote {path}")
    click.echo(f"lifecycle: {result['passed']} / {result['total']} scenarios pass")


@eval_group.command(name="poisoning")
@click.option(
    "--data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Corpus YAML (default: the corpus shipped with engram).",
)
@embedder_option("minilm", "Embedder of the semantic detector.", keyword_only=True)
@click.option("--threshold", type=float, default=None, help="Semantic similarity threshold.")
@click.option("--margin", type=float, default=None, help="Semantic lead over benign facts.")
@click.option(
    "--misses",
    type=click.Choice(["tune", "held-out"]),
    default=None,
    help="Also list the wrong outcomes of this half.",
)
def poisoning(
    data: Path | None,
    embedder: str,
    threshold: float | None,
    margin: float | None,
    misses: str | None,
) -> None:
    """Detection and false-positive rates of the poisoning guard, per technique and
    language, on the tuning and held-out halves of a labelled corpus.

    Example: engram eval poisoning --embedder minilm --misses tune
    """
    from engram.cli._embedding import embedder_or_none
    from engram.eval import run_poisoning
    from engram.policy import PoisoningGuard, WritePolicy

    defaults = PoisoningGuard()
    guard = PoisoningGuard(
        embedder_or_none(embedder),
        defaults.threshold if threshold is None else threshold,
        defaults.margin if margin is None else margin,
    )
    half: Literal["tune", "held-out"] | None = None
    if misses is not None:
        half = "tune" if misses == "tune" else "held-out"
    text = run_poisoning(WritePolicy(guard=guard), data, embedder_name=embedder, show_misses=half)
    click.echo(text)
