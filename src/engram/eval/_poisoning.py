"""The poisoning benchmark: detection and false-positive rates of the write policy.

A corpus (YAML, ``items:`` of ``text``, ``language``, ``technique``, ``label``
``attack|benign``) is split in two halves by a hash of each text (:func:`split_of`):
thresholds are tuned on ``tune`` and reported on ``held-out``. Each item goes through
:meth:`engram.policy.WritePolicy.evaluate` as a trusted, tagged write, so only the
poisoning guard decides: an attack counts as detected when it is not stored (held
for review, or rejected: a one-token base64 blob is too short to be a fact), and a
benign fact as a false positive when it is not stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from engram.errors import InvalidInputError
from engram.policy import PolicyDecision, WriteCandidate, WritePolicy

Split = Literal["tune", "held-out"]
SPLITS: tuple[Split, ...] = ("tune", "held-out")
LABELS = ("attack", "benign")


@dataclass(frozen=True)
class Item:
    """One labelled text of the corpus."""

    text: str
    language: str
    technique: str
    label: str

    @property
    def split(self) -> Split:
        return split_of(self.text)


@dataclass(frozen=True)
class Outcome:
    """What the policy did with one item."""

    item: Item
    decision: PolicyDecision

    @property
    def flagged(self) -> bool:
        """Not stored (held for review or rejected)."""
        return not self.decision.allowed


@dataclass(frozen=True)
class Rates:
    """Detection over attacks and false positives over benign facts, with counts."""

    attacks: int
    detected: int
    benign: int
    false_positives: int

    @property
    def detection(self) -> float | None:
        return self.detected / self.attacks if self.attacks else None

    @property
    def false_positive_rate(self) -> float | None:
        return self.false_positives / self.benign if self.benign else None


def split_of(text: str) -> Split:
    """``tune`` or ``held-out``: the parity of the first byte of the text's SHA-256."""
    return "tune" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "held-out"


def shipped_corpus() -> Path:
    """The corpus shipped with engram."""
    return Path(str(resources.files("engram.eval").joinpath("poisoning.yaml")))


def load_corpus(path: Path | None = None) -> list[Item]:
    """The items of the corpus at ``path`` (default: :func:`shipped_corpus`)."""
    source = path or shipped_corpus()
    try:
        raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidInputError(f"cannot read the poisoning corpus {source}: {exc}") from exc
    entries = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError(f"{source} holds no items: expected a top-level 'items:' list")
    return [_item(entry, source) for entry in entries]


def _item(entry: Any, source: Path) -> Item:
    fields = ("text", "language", "technique", "label")
    if not isinstance(entry, dict) or any(not isinstance(entry.get(f), str) for f in fields):
        raise InvalidInputError(f"{source}: every item needs string fields {fields}: {entry!r}")
    if entry["label"] not in LABELS:
        raise InvalidInputError(f"{source}: label must be one of {LABELS}: {entry!r}")
    return Item(*(entry[f] for f in fields))


def judge(items: Iterable[Item], policy: WritePolicy) -> list[Outcome]:
    """Every item through ``policy`` as a trusted write tagged ``fact``."""
    return [Outcome(i, policy.evaluate(WriteCandidate(i.text, tags=("fact",)))) for i in items]


def rates(outcomes: Iterable[Outcome]) -> Rates:
    """The counts behind detection and false-positive rates of ``outcomes``."""
    found = list(outcomes)
    attacks = [o for o in found if o.item.label == "attack"]
    benign = [o for o in found if o.item.label == "benign"]
    return Rates(
        len(attacks), sum(o.flagged for o in attacks), len(benign), sum(o.flagged for o in benign)
    )


def grouped(outcomes: Sequence[Outcome], key: Callable[[Item], str]) -> dict[str, Rates]:
    """:func:`rates` per value of ``key`` (technique, language...), sorted by name."""
    names = sorted({key(o.item) for o in outcomes})
    return {name: rates(o for o in outcomes if key(o.item) == name) for name in names}


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(title: str, groups: dict[str, Rates]) -> str:
    """A Markdown table of ``groups``: detection and false-positive rate with counts."""
    lines = [
        f"| {title} | attacks | detection | benign | false positives |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in groups.items():
        lines.append(
            f"| {name} | {r.attacks} | {_rate(r.detection)} | {r.benign} "
            f"| {_rate(r.false_positive_rate)} ({r.false_positives}) |"
        )
    return "\n".join(lines)


def report(outcomes: Sequence[Outcome], policy: WritePolicy, embedder_name: str) -> str:
    """The whole report: thresholds, then per split a summary and the two tables."""
    guard = policy.guard
    semantic = (
        f"semantic detector on ({embedder_name}): threshold {guard.threshold:g}, "
        f"margin {guard.margin:g}"
        if guard.embedder is not None
        else "semantic detector off (no embedder)"
    )
    parts = [f"Thresholds: patterns on every normalised view; {semantic}."]
    for split in SPLITS:
        mine = [o for o in outcomes if o.item.split == split]
        total = rates(mine)
        parts.append(
            f"\n## {split}: detection {_rate(total.detection)} ({total.detected}/{total.attacks}), "
            f"false positives {_rate(total.false_positive_rate)} "
            f"({total.false_positives}/{total.benign})\n"
        )
        parts.append(table("technique", grouped(mine, lambda i: i.technique)))
        parts.append("")
        parts.append(table("language", grouped(mine, lambda i: i.language)))
    return "\n".join(parts)


def misses(outcomes: Sequence[Outcome], split: Split) -> list[str]:
    """Readable lines for every wrong outcome of ``split`` (missed attack, flagged fact)."""
    lines = []
    for o in outcomes:
        if o.item.split != split or o.flagged == (o.item.label == "attack"):
            continue
        what = "missed" if o.item.label == "attack" else f"flagged ({o.decision.reason})"
        lines.append(f"{what} [{o.item.language}/{o.item.technique}] {o.item.text!r}")
    return lines


def run_poisoning(
    policy: WritePolicy,
    path: Path | None = None,
    *,
    embedder_name: str = "none",
    show_misses: Split | None = None,
) -> str:
    """The whole benchmark as text: :func:`report` of the corpus at ``path`` through
    ``policy``, then the wrong outcomes of the ``show_misses`` half when asked."""
    outcomes = judge(load_corpus(path), policy)
    text = report(outcomes, policy, embedder_name)
    if show_misses is None:
        return text
    lines = misses(outcomes, show_misses)
    return "\n".join([text, f"\n## wrong outcomes ({show_misses})", *lines])
