"""Writes a result document as JSON, a Markdown table and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engram.errors import MissingDependencyError

MAIN_GROUPS = ("1-4", "all")


def main_group(result: dict[str, Any]) -> str:
    groups: dict[str, Any] = next(iter(result["methods"].values()), {})
    return next((g for g in MAIN_GROUPS if g in groups), next(iter(groups), ""))


def _columns(result: dict[str, Any]) -> list[str]:
    ks, budgets = result["ks"], result["budgets"]
    cols = [f"recall@{k}" for k in ks] + [f"all@{k}" for k in ks] + [f"any@{k}" for k in ks]
    cols += sorted(
        {
            m
            for g in result["methods"].values()
            for row in g.values()
            for m in row
            if m.startswith("ndcg")
        }
    )
    cols += [f"recall@{b}tok" for b in budgets]
    answers = result.get("answers")
    return cols + ([f"qa@{answers['budget']}tok", "qa_n", "qa_failed"] if answers else [])


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _cell(row: dict[str, Any], column: str) -> str:
    """A metric of a row; answer columns a question group was not asked show a dash."""
    if column.startswith("qa"):
        value = row.get(column)
        return "–" if value is None else _fmt(value) if "@" in column else f"{value:.0f}"
    return _fmt(row.get(column, 0.0))


def group_table(result: dict[str, Any], group: str) -> list[str]:
    cols = _columns(result)
    lines = ["| method | n | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for name, groups in result["methods"].items():
        row = groups.get(group)
        if row is None:
            continue
        cells = [_cell(row, c) for c in cols]
        lines.append(f"| {name} | {int(row['n'])} | " + " | ".join(cells) + " |")
    return lines


def tokens_table(result: dict[str, Any], group: str) -> list[str]:
    """Recall within each budget and the mean tokens actually used, plus the references."""
    budgets = result["budgets"]
    head = "| method | " + " | ".join(f"{b} tok: recall (used)" for b in budgets) + " |"
    lines = [head, "|---" * (len(budgets) + 1) + "|"]
    for name, groups in result["methods"].items():
        row = groups.get(group, {})
        cells = [
            f"{_fmt(row.get(f'recall@{b}tok', 0.0))} ({row.get(f'tokens@{b}tok', 0.0):.0f})"
            for b in budgets
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for name, ref in result["reference"].items():
        lines.append(
            f"| {name} | recall {_fmt(ref['recall'])} at {ref['tokens']:.0f} tokens"
            + " |" * len(budgets)
        )
    return lines


def answers_table(result: dict[str, Any]) -> list[str]:
    """QA accuracy per method and group, with the evidence recall of the same context."""
    answers = result["answers"]
    budget = answers["budget"]
    rows = {name: result["methods"][name] for name in answers["methods"]}
    asked = sorted({g for groups in rows.values() for g, row in groups.items() if "qa_n" in row})
    main = main_group(result)
    groups = [main, *[g for g in asked if g != main]] if main in asked else asked
    lines = [
        f"- answer model: {answers['answer_model']}; judge model: {answers['judge_model']}",
        f"- {answers['asked']} answers, {answers['correct']} judged CORRECT, "
        f"{answers['failed']} failed (counted as not correct)",
        *[f"  - {n}× {error}" for error, n in answers["errors"].items()],
        "",
        "Each cell: the share of answers judged CORRECT (evidence recall of the context read).",
        "",
        "| method | " + " | ".join(f"{g}: accuracy (recall)" for g in groups) + " |",
        "|---" * (len(groups) + 1) + "|",
    ]
    for name, by_group in rows.items():
        cells = [_accuracy(by_group.get(g, {}), budget) for g in groups]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _accuracy(row: dict[str, Any], budget: int) -> str:
    if "qa_n" not in row:
        return "–"
    return f"{_fmt(row[f'qa@{budget}tok'])} ({_fmt(row['qa_evidence'])})"


def markdown(result: dict[str, Any]) -> str:
    group = main_group(result)
    config = result.get("config", {})
    out = [f"# {result['benchmark']} retrieval", ""]
    out += [f"- {key}: {value}" for key, value in sorted(config.items())]
    out += [
        "",
        f"## Recall within a context budget (group {group})",
        "",
        *tokens_table(result, group),
    ]
    if result.get("answers"):
        budget = result["answers"]["budget"]
        out += ["", f"## Answer accuracy, LLM judge ({budget} tokens of context)", ""]
        out += answers_table(result)
    groups = sorted({g for gs in result["methods"].values() for g in gs})
    for name in [group, *[g for g in groups if g != group]]:
        out += ["", f"## Group {name}", "", *group_table(result, name)]
    timings = result.get("timings", {})
    if timings:
        out += ["", "## Timings (seconds)", ""]
        out += [f"- {name}: {json.dumps(t, sort_keys=True)}" for name, t in timings.items()]
    return "\n".join(out) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    """Recall vs context tokens, one line per method, references as points."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependencyError("plots need matplotlib: pip install 'engram[eval]'") from exc
    group = main_group(result)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, groups in result["methods"].items():
        row = groups.get(group, {})
        xs = [row.get(f"tokens@{b}tok", 0.0) for b in result["budgets"]]
        ys = [row.get(f"recall@{b}tok", 0.0) for b in result["budgets"]]
        ax.plot(xs, ys, marker="o", label=name)
    for (name, ref), colour in zip(result["reference"].items(), ("black", "grey"), strict=False):
        ax.scatter([ref["tokens"]], [ref["recall"]], marker="x", s=60, color=colour, label=name)
    ax.set_xscale("symlog", linthresh=500)
    ax.set_xlabel("context tokens (mean, rendered)")
    ax.set_ylabel("evidence recall")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{result['benchmark']}: recall vs context tokens ({group})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def write(result: dict[str, Any], out_dir: Path, stem: str, plots: bool = True) -> list[Path]:
    """Write ``<stem>.json``, ``<stem>.md`` and (unless disabled) ``<stem>.png`` in ``out_dir``;
    with answers, every question's answer and verdict in ``<stem>.answers.jsonl``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.json", out_dir / f"{stem}.md"]
    log = result.get("answer_log")
    document = {k: v for k, v in result.items() if k != "answer_log"}
    paths[0].write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(result), encoding="utf-8")
    if log is not None:
        paths.append(out_dir / f"{stem}.answers.jsonl")
        lines = [json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n" for entry in log]
        paths[-1].write_text("".join(lines), encoding="utf-8")
    if plots and result.get("methods"):
        paths.append(out_dir / f"{stem}.png")
        plot(result, paths[-1])
    return paths
