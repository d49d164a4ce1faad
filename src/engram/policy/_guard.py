"""The poisoning guard: normalise every reading of a text, then judge its intent.

Two detectors, and a hold always names the one that fired:

- ``pattern``: the multilingual intent patterns of :mod:`engram.policy._patterns`,
  tried on every view of :func:`engram.policy._normalise.views` (canonical,
  confusable skeleton, collapsed spacing/leetspeak, decoded base64/hex/URL/
  entities, comments, rot13, reversed);
- ``semantic``: with an embedder, the similarity of each sentence and sentence
  pair of the readable views to a bank of attack intents, contrasted with a bank
  of benign look-alike facts (:mod:`engram.policy._semantic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.policy._normalise import View, views
from engram.policy._patterns import pattern_signal, squashed_signal, warm_patterns
from engram.policy._semantic import IntentDetector, Similarity, segments
from engram.recall import Embedder

SEMANTIC_THRESHOLD = 0.45
"""Least similarity to an attack intent that holds a write (all-MiniLM-L6-v2 scale).

Chosen on the tuning half of the shipped poisoning corpus (``engram eval poisoning``):
0.40 / 0.45 / 0.50 (margin 0.1) held 0.989 / 0.973 / 0.967 of its attacks with 1 / 1 /
0 of 142 benign facts held; the middle keeps room for benign text never seen."""
SEMANTIC_MARGIN = 0.1
"""Least lead of the attack similarity over the best benign look-alike (tuning half:
margins 0 / 0.05 / 0.1 at threshold 0.45 held 4 / 2 / 1 benign facts and 0.978 / 0.973
/ 0.973 of the attacks)."""
_UNREADABLE = frozenset({"rot13", "reversed", "squashed"})
"""Views that are only read when they decode to something the patterns recognise."""


def readable(readings: list[View]) -> list[View]:
    """The views the semantic detector embeds: the canonical text, and each other
    readable view that says something else once case is ignored (the embedder is
    uncased, so a Latin text's skeleton would repeat it). Skeletons and collapsed
    spellings map to Latin letters, so they are read only when the text mixes Latin
    letters with other scripts (a Russian sentence's skeleton is noise)."""
    seen = {readings[0].text.casefold()} if readings else set()
    mixed = bool(readings) and _mixes_scripts(readings[0].text)
    latin = mixed or (bool(readings) and readings[0].text.isascii())
    out = readings[:1]
    for view in readings[1:]:
        key = view.text.casefold()
        skip = (view.how == "skeleton" and not mixed) or (view.how == "collapsed" and not latin)
        if view.how in _UNREADABLE or key in seen or skip:
            continue
        seen.add(key)
        out.append(view)
    return out


def _case_free(text: str) -> str:
    """``text`` lower-cased when it is ASCII (the case-insensitive patterns then read it
    as they read any other casing of it; the skeleton of an ASCII text is its lower
    case), else ``text`` itself (full case folding beyond ASCII is the engine's)."""
    return text.lower() if text.isascii() else text


def _mixes_scripts(text: str) -> bool:
    latin = any("a" <= c <= "z" for c in text.lower())
    return latin and any(c.isalpha() and not c.isascii() for c in text)


@dataclass(frozen=True)
class Hold:
    """Why the guard holds a text: the detector (``signal``), intent, view and reason."""

    signal: str
    intent: str
    view: str
    reason: str

    def describe(self) -> str:
        where = "" if self.view == "canonical" else f" (read as {self.view} text)"
        return f"{self.reason}{where} [signal: {self.signal}:{self.intent}]"


@dataclass(frozen=True)
class PoisoningGuard:
    """Judges whether a text reads like an instruction to the agent.

    Without an embedder only the patterns judge; with one, the semantic detector
    also looks at paraphrases the patterns miss.
    """

    embedder: Embedder | None = None
    threshold: float = SEMANTIC_THRESHOLD
    margin: float = SEMANTIC_MARGIN
    _detectors: dict[int, IntentDetector] = field(default_factory=dict, compare=False, repr=False)

    def judge(self, text: str) -> Hold | None:
        """The reason to hold ``text`` for review, or ``None`` when it reads as data."""
        readings = views(text)
        return self._pattern(readings) or self._semantic(readings)

    def similarity(self, text: str) -> Similarity | None:
        """The semantic detector's best match for ``text`` (``None`` without an embedder)."""
        detector = self._detector()
        if detector is None:
            return None
        return detector.best([v.text for v in readable(views(text))])

    def warm(self) -> None:
        """Compile the patterns and embed the semantic banks now (what the first
        :meth:`judge` does otherwise), e.g. while something else waits."""
        warm_patterns()
        detector = self._detector()
        if detector is not None:
            detector.warm()

    def embedded_texts(self, text: str) -> list[str]:
        """The texts :meth:`judge` may have the embedder embed for ``text`` (none
        without one), so a caller can embed many texts' in one call first."""
        if self.embedder is None:
            return []
        parts = (s for view in readable(views(text)) for s in segments(view.text))
        return list(dict.fromkeys(parts))

    @staticmethod
    def _pattern(readings: list[View]) -> Hold | None:
        judged: set[str] = set()
        for view in readings:
            if view.how == "squashed":
                signal = squashed_signal(view.text)
            elif (same := _case_free(view.text)) in judged:
                continue  # the patterns ignore case: a view judged already, in other case
            else:
                judged.add(same)
                signal = pattern_signal(view.text)
            if signal is not None:
                return Hold("pattern", signal.name, view.how, signal.reason)
        return None

    def _semantic(self, readings: list[View]) -> Hold | None:
        detector = self._detector()
        if detector is None:
            return None
        texts = readable(readings)
        best = detector.best([v.text for v in texts])
        if best is None or not detector.holds(best):
            return None
        view = next((v.how for v in texts if best.segment in v.text), "canonical")
        reason = (
            f"reads like an attack ({best.intent}: similarity {best.attack:.2f}, "
            f"{best.contrast:+.2f} over the closest benign fact)"
        )
        return Hold("semantic", best.intent, view, reason)

    def _detector(self) -> IntentDetector | None:
        if self.embedder is None:
            return None
        key = id(self.embedder)
        if key not in self._detectors:
            self._detectors[key] = IntentDetector(self.embedder, self.threshold, self.margin)
        return self._detectors[key]
