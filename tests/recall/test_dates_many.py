"""Queries that name thousands of dates: the same spans as one by one, in time that grows
with the query, not with its square (a 100,000-character query once took 76 s)."""

from __future__ import annotations

import random
import sys
from datetime import date
from types import FrameType
from typing import Any

from engram.recall import _dates
from engram.recall._dates import Span, relative_spans, spans


def _reference_relative(text: str, today: date) -> list[tuple[int, int, Span]]:
    """The first implementation of :func:`relative_spans`: every match tested against
    every stretch read before it."""
    out: list[tuple[int, int, Span]] = []
    for pattern in _dates._RELATIVE:
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e, _ in out):
                continue
            try:
                days = _dates._relative(match, today)
            except (OverflowError, ValueError):
                continue
            if days is not None:
                out.append((match.start(), match.end(), _dates._between(*days)))
    return sorted(out, key=lambda found: found[0])


def _reference_spans(text: str, today: date | None = None) -> list[Span]:
    """The first implementation of :func:`spans`, quadratic in the dates named."""
    found: dict[Span, int] = {}
    taken: list[tuple[int, int]] = []
    if today is not None:
        for start, end, relative in _reference_relative(text, today):
            taken.append((start, end))
            found.setdefault(relative, start)
    for pattern in _dates._PATTERNS:
        for match in pattern.finditer(text):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            span = _dates._span(match)
            if span is not None:
                taken.append(match.span())
                found.setdefault(span, match.start())
    return sorted(found, key=found.__getitem__)


_WORDS = (
    "March", "Mar", "May", "may", "Dec.", "June", "3", "3rd", "21st", "31", "32", "0", "of",
    "2023", "1999", "2023/05/20", "2023-13-01", "12:30", "summer", "Fall", "winter", "spring",
    "yesterday", "today", "last", "this", "past", "the", "in", "week", "weekend", "month",
    "year", "years", "days", "ago", "two", "a few", "several", "10", "on", "Tuesday",
    "Saturdays", "fortnight", "over", "night", "morning", "day before", "Calvin", "at",
)  # fmt: skip
_GLUE = (" ", " ", " ", ", ", "\n", "", "-", "/", ". ")


def _random_text(rng: random.Random) -> str:
    picks = rng.choices(_WORDS, k=rng.randint(0, 40))
    return "".join(word + rng.choice(_GLUE) for word in picks)


def test_the_spans_are_those_of_the_first_implementation() -> None:
    rng = random.Random(20240229)
    today = date(2023, 10, 4)
    for _ in range(3000):
        text = _random_text(rng)
        assert spans(text) == _reference_spans(text), text
        assert spans(text, today) == _reference_spans(text, today), text
        assert relative_spans(text, today) == _reference_relative(text, today), text


def test_overlapping_readings_keep_the_first_pattern() -> None:
    text = "on 3 June, 2023 and June 2023 and 2023 and summer 2023 yesterday 2023/05/20 2022"
    today = date(2023, 10, 4)
    assert spans(text, today) == _reference_spans(text, today)
    assert spans(text, today)[:2] == [Span(2023, 6, 3, 3), Span(2023, 6)]


def _lines_run(text: str) -> int:
    """How many lines of :mod:`engram.recall._dates` (its generator expressions included)
    reading ``text`` runs: a count of work, the same on any machine."""
    count = 0
    module = _dates.__file__

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if frame.f_code.co_filename != module:
            return None
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        spans(text, date(2023, 10, 4))
    finally:
        sys.settrace(previous)
    return count


def test_work_grows_with_the_number_of_dates_not_its_square() -> None:
    for unit in ("March 3 ", "2023 ", "yesterday ", "summer 2023, 3rd of June "):
        small, large = _lines_run(unit * 500), _lines_run(unit * 2000)
        assert small > 500, unit  # (the count sees the work)
        assert large < 5 * small, (unit, small, large)  # (quadratic: 16 times)
