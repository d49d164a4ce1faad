"""Calendar dates in queries and in stored date fields (pure, no I/O).

A question such as "Which city was Calvin at on October 3, 2023?" or "What did Dave pick
up in October 2023?" names a time; the turns that answer it were usually said then or
shortly after ("yesterday I met some artists in Boston", said on 4 October). The context
re-ranker (:mod:`engram.recall._context`) boosts turns whose stored date falls in the
time a query names, from :func:`spans` of the query and :func:`parse` of each turn's date.

Recognised, in English: ``3 June, 2023`` / ``June 3, 2023`` / ``3rd of June`` (a day),
``June 2023`` / ``June`` (a month, in any year when none is given), ``summer 2023`` (a
season with its year), a bare year ``2023``, and ISO-like stored dates ``2023/05/20`` or
``2023-05-20``. Month names must be capitalised ("may" is a verb, "May" a month).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {
    name: number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
"""English month names and three-letter abbreviations, capitalised, to their numbers."""

SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}
"""Seasons (northern hemisphere) as first and last month; winter YEAR starts in December
of the year before. Only read with a year ("summer 2023"): "fall" alone is mostly a verb."""

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_SEASON_YEAR = re.compile(
    rf"\b(?P<season>{'|'.join(SEASONS)})(?:\s+of)?,?\s+{_YEAR}\b", re.IGNORECASE
)
_DAY_MONTH = re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}\b(?:,?\s+{_YEAR}\b)?")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*:)(?:,?\s+{_YEAR}\b)?")
_MONTH_YEAR = re.compile(rf"\b{_MONTH}(?:,?\s+{_YEAR}\b)?")
_ISO = re.compile(r"\b(?P<year>(?:19|20)\d{2})[/-](?P<month>\d{1,2})[/-](?P<day>\d{1,2})(?!\d)")
_BARE_YEAR = re.compile(rf"(?<![/\-\d]){_YEAR}\b(?![/\-]\d)")
_PATTERNS = (_SEASON_YEAR, _DAY_MONTH, _MONTH_DAY, _MONTH_YEAR, _ISO, _BARE_YEAR)
"""Tried in this order (a day before its month, a month before a bare year): a stretch of
text one pattern matched is not read again by a later one."""
_FULL_DATES = (_DAY_MONTH, _MONTH_DAY, _ISO)
"""The patterns that can name a day, month and year (what a stored date field holds)."""


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of days a query names: ``month`` to ``last_month`` (default ``month``;
    the whole year when None) of ``year`` (any year when None), optionally one day."""

    year: int | None
    month: int | None
    first_day: int | None = None
    last_day: int | None = None
    last_month: int | None = None

    def contains(self, day: date, slack_days: int = 0) -> bool:
        """Whether ``day`` falls in the span or at most ``slack_days`` after it."""
        years = [self.year] if self.year is not None else [day.year - 1, day.year, day.year + 1]
        slack = timedelta(days=slack_days)
        return any(start <= day <= end + slack for start, end in map(self._range, years))

    def _range(self, year: int) -> tuple[date, date]:
        if self.month is None:
            return date(year, 1, 1), date(year, 12, 31)
        last_month = self.last_month or self.month
        first_year = year - 1 if last_month < self.month else year
        first = min(self.first_day or 1, _days_in(first_year, self.month))
        last = min(self.last_day or 31, _days_in(year, last_month))
        return date(first_year, self.month, first), date(year, last_month, last)


def _days_in(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def spans(text: str) -> list[Span]:
    """The days, months and years ``text`` names, each once, in order of appearance."""
    found: dict[Span, int] = {}
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            span = _span(match)
            if span is not None:
                taken.append(match.span())
                found.setdefault(span, match.start())
    return sorted(found, key=found.__getitem__)


def parse(text: str) -> date | None:
    """The first full calendar date (day, month and year) in a stored date field."""
    for pattern in _FULL_DATES:
        for match in pattern.finditer(text):
            span = _span(match)
            if span and span.year and span.month and span.first_day:
                return date(span.year, span.month, span.first_day)
    return None


def _span(match: re.Match[str]) -> Span | None:
    groups = match.groupdict()
    if groups.get("season"):
        first, last = SEASONS[groups["season"].lower()]
        return Span(int(groups["year"]), first, last_month=last)
    month_text = groups.get("month")
    month = None
    if month_text is not None:
        month = int(month_text) if month_text.isdigit() else MONTHS[month_text]
    year = int(groups["year"]) if groups.get("year") else None
    day = int(groups["day"]) if groups.get("day") else None
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    return Span(year, month, day, day)
