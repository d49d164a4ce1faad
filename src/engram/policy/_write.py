"""The write policy: which candidate memories are stored, held for review or rejected."""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field

import regex

from engram.errors import InvalidInputError
from engram.policy._guard import PoisoningGuard
from engram.policy._normalise import canonical
from engram.policy._redact import PII_KINDS, redact
from engram.policy._text import is_service_phrase, width, word_count

SOURCES = ("user", "tool", "policy", "agent")
SENSITIVITIES = ("low", "normal", "high")
STABLE_TAGS = frozenset(
    {"preference", "constraint", "profile", "goal", "fact", "plan", "skill", "relationship"}
)
"""Tags that mark a durable fact about the user (a write needs one of them)."""


@dataclass(frozen=True)
class WriteCandidate:
    """A memory someone wants to store."""

    text: str
    tags: tuple[str, ...] = ()
    source: str = "user"  # user / tool / policy / agent
    sensitivity: str = "normal"  # low / normal / high
    ttl_days: float | None = None


@dataclass(frozen=True)
class PolicyDecision:
    """What the policy says about a candidate; ``text`` is always the redacted text."""

    allowed: bool
    held_for_review: bool
    reason: str | None
    text: str
    redactions: tuple[str, ...]


def instruction_reason(text: str, guard: PoisoningGuard | None = None) -> str | None:
    """Why ``text`` reads like an instruction to the agent (naming the signal that
    fired), or ``None`` if it does not."""
    hold = (guard or PoisoningGuard()).judge(text)
    return None if hold is None else hold.describe()


def _tag_root(tag: str) -> str:
    folded = unicodedata.normalize("NFKC", tag).strip().casefold()
    return regex.split(r"[:/.]", folded, maxsplit=1)[0]


@dataclass(frozen=True)
class WritePolicy:
    """Options of the write policy; :meth:`evaluate` applies them to one candidate.

    Length is counted in columns (a CJK character counts two) and words in any
    script (a Han or kana character counts as one); ``max_chars`` bounds both the
    canonical text and the text as stored (stripped at its ends), so padding that the
    canonical form drops (spaces, invisible characters) still counts.
    ``source="tool"`` is untrusted by default: tool output carries third-party content
    (web pages, documents), the usual route of indirect prompt injection. An untrusted
    write is rejected, unless it reads like an instruction: then it is held for review
    with the reason, so someone can see what a tool tried to plant.
    """

    min_chars: int = 6
    min_words: int = 2
    max_chars: int = 4000
    trusted_sources: frozenset[str] = frozenset({"user", "agent", "policy"})
    stable_tags: frozenset[str] = STABLE_TAGS
    require_stable_tag: bool = True
    min_ttl_days: float = 1.0
    max_ttl_days: float = 365.0
    reject_high_sensitivity: bool = True
    redact_kinds: tuple[str, ...] = PII_KINDS
    hold_instructions: bool = True
    guard: PoisoningGuard = field(default_factory=PoisoningGuard)

    def evaluate(self, candidate: WriteCandidate) -> PolicyDecision:
        """Decide on ``candidate``: allowed, rejected (with reasons) or held for review."""
        _check_candidate(candidate)
        text, found = redact(candidate.text.strip(), self.redact_kinds)
        reasons = self.rejections(candidate)
        untrusted = self._source(candidate)
        if any(reason != untrusted for reason in reasons):
            return PolicyDecision(False, False, "; ".join(reasons), text, found)
        held = self.guard.judge(candidate.text) if self.hold_instructions else None
        if held is not None:
            origin = f" from untrusted source {candidate.source!r}" if untrusted else ""
            reason = f"held for review{origin}: {held.describe()}"
            return PolicyDecision(False, True, reason, text, found)
        if untrusted:
            return PolicyDecision(False, False, untrusted, text, found)
        return PolicyDecision(True, False, None, text, found)

    def rejections(self, candidate: WriteCandidate) -> list[str]:
        """Every rule ``candidate`` breaks, as readable reasons (empty when none)."""
        checks = (self._content, self._sensitivity, self._source, self._tags, self._ttl)
        return [reason for check in checks if (reason := check(candidate))]

    def _content(self, candidate: WriteCandidate) -> str | None:
        text = canonical(candidate.text)
        if is_service_phrase(text):
            return f"service phrase, not a fact: {text[:40]!r}"
        columns, words = width(text), word_count(text)
        if columns < self.min_chars or words < self.min_words:
            need = f"need {self.min_chars} and {self.min_words}"
            return f"too short ({columns} columns, {words} words; {need})"
        stored = len(candidate.text.strip())  # (padding the canonical form drops is kept)
        if max(len(text), stored) > self.max_chars:
            return f"too long ({max(len(text), stored)} chars; at most {self.max_chars})"
        return None

    def _sensitivity(self, candidate: WriteCandidate) -> str | None:
        if self.reject_high_sensitivity and candidate.sensitivity == "high":
            return "sensitivity is high: such data is not stored in long-term memory"
        return None

    def _source(self, candidate: WriteCandidate) -> str | None:
        if candidate.source not in self.trusted_sources:
            trusted = ", ".join(sorted(self.trusted_sources))
            return f"untrusted source {candidate.source!r} (trusted: {trusted})"
        return None

    def _tags(self, candidate: WriteCandidate) -> str | None:
        if not self.require_stable_tag:
            return None
        if any(_tag_root(tag) in self.stable_tags for tag in candidate.tags):
            return None
        wanted = ", ".join(sorted(self.stable_tags))
        return f"no stable tag among {list(candidate.tags)} (need one of: {wanted})"

    def _ttl(self, candidate: WriteCandidate) -> str | None:
        ttl = candidate.ttl_days
        if ttl is None or (math.isfinite(ttl) and self.min_ttl_days <= ttl <= self.max_ttl_days):
            return None
        return f"ttl_days={ttl} is outside {self.min_ttl_days:g}-{self.max_ttl_days:g} days"


def _check_candidate(candidate: WriteCandidate) -> None:
    if not isinstance(candidate.text, str):
        raise InvalidInputError(f"text must be a string, got {type(candidate.text).__name__}")
    if candidate.sensitivity not in SENSITIVITIES:
        raise InvalidInputError(
            f"sensitivity {candidate.sensitivity!r} is not one of {', '.join(SENSITIVITIES)}"
        )
