"""Calendar dates in queries and in stored date fields (pure, no I/O).

A question such as "Which city was Calvin at on October 3, 2023?" or "What did Dave pick
up in October 2023?" names a time; the turns that answer it were usually said then or
shortly after ("yesterday I met some artists in Boston", said on 4 October). The context
re-ranker (:mod:`engram.recall._context`) boosts turns whose stored date falls in the
time a query names, from :func:`spans` of the query and :func:`parse` of each turn's date.

Recognised, in English: ``3 June, 2023`` / ``June 3, 2023`` / ``3rd of June`` (a day),
``June 2023`` / ``June`` (a month, in any year when none is given), ``summer 2023`` (a
season with its year), a bare year ``2023``, and ISO-like stored dates ``2023/05/20`` or
``2023-05-20``. Month names must be capitalised ("may" is a verb, "May" a month). Given
the day a question is asked, times relative to it too: "yesterday", "10 days ago", "last
week", "last Saturday", "in the past three months" (:func:`relative_spans`).
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
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


def spans(text: str, today: date | None = None) -> list[Span]:
    """The days, months and years ``text`` names, each once, in order of appearance; with
    ``today``, also those it names relative to it (:func:`relative_spans`)."""
    found: dict[Span, int] = {}
    taken = _Read()
    if today is not None:
        for start, end, relative in relative_spans(text, today):
            taken.add(start, end)
            found.setdefault(relative, start)
    for pattern in _PATTERNS:
        taken.settle()
        for match in pattern.finditer(text):
            if taken.overlaps(*match.span()):
                continue
            span = _span(match)
            if span is not None:
                taken.add(*match.span())
                found.setdefault(span, match.start())
    return sorted(found, key=found.__getitem__)


class _Read:
    """The stretches of a text that earlier patterns read, disjoint and in order, so
    whether a match overlaps one is a bisection: a query naming thousands of dates costs
    n log n, not n squared. What a pattern reads is added after its scan (:meth:`settle`):
    one scan's matches never overlap each other."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._added: list[tuple[int, int]] = []

    def overlaps(self, start: int, end: int) -> bool:
        """Whether ``start``..``end`` overlaps a stretch read before the last settle."""
        before = bisect_left(self._starts, end)  # (the stretches starting before ``end``)
        return before > 0 and self._ends[before - 1] > start

    def add(self, start: int, end: int) -> None:
        self._added.append((start, end))

    def settle(self) -> None:
        """Take in the stretches added since the last call (a merge of two sorted runs)."""
        if self._added:
            merged = sorted([*zip(self._starts, self._ends, strict=True), *self._added])
            self._starts = [start for start, _ in merged]
            self._ends = [end for _, end in merged]
            self._added = []


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


_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3,
    "a couple of": 2, "couple of": 2, "few": 3, "several": 3,
}  # fmt: skip
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|fortnight|month|year)s?"
_VAGUE = frozenset(("a few", "few", "several"))
"""Counts that name no number: "a few days ago" is from six days back to two."""
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.IGNORECASE)
_PAST = re.compile(rf"\b(?:in\s+)?(?:the\s+)?(?:past|last)\s+{_COUNT}\s+{_UNIT}\b", re.IGNORECASE)
_LAST = re.compile(
    r"\b(?P<which>last|this|past)\s+(?P<unit>week(?:end)?|month|year|"
    + "|".join(_WEEKDAYS)
    + r")\b",
    re.IGNORECASE,
)
_DAYS = re.compile(
    r"\b(?:the\s+day\s+before\s+)?(?P<day>yesterday|today|last\s+night|tonight"
    r"|this\s+(?:morning|afternoon|evening)|earlier\s+today)\b",
    re.IGNORECASE,
)
_ON_WEEKDAY = re.compile(
    r"\bon\s+(?P<weekday>" + "|".join(name.capitalize() for name in _WEEKDAYS) + r")\b(?!s)"
)
""""on Tuesday": the last one before the day asked (capitalised; "on Tuesdays" is a habit)."""
_FORTNIGHT = re.compile(r"\b(?:the\s+)?(?:past|last)\s+fortnight\b", re.IGNORECASE)
"""The fourteen days up to the day asked."""
_WEEKEND = re.compile(r"\b(?:over|at|on|during)\s+the\s+weekend\b", re.IGNORECASE)
"""The last weekend ("What did I cook over the weekend?")."""
_WEEKDAYS_AGO = re.compile(
    rf"\b{_COUNT}\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")s\s+ago\b", re.IGNORECASE
)
""""two Saturdays ago": the one a week before the last."""
_RELATIVE = (_AGO, _WEEKDAYS_AGO, _PAST, _FORTNIGHT, _LAST, _WEEKEND, _DAYS, _ON_WEEKDAY)
"""Tried in this order: "the past three months" before "last month"'s shorter reading."""


def relative_spans(text: str, today: date) -> list[tuple[int, int, Span]]:
    """``(start, end, span)`` of each stretch of ``text`` naming days relative to
    ``today``: "yesterday", "last night", "this morning", "on Tuesday" (the last one
    before ``today``), "10 days ago" (that day), "three weeks ago" (that week),
    "two months ago" (that month), "last week" / "this week" (Monday to Sunday),
    "last weekend" / "over the weekend", "last month", "last year", "last Saturday"
    (the one before ``today``), "two Saturdays ago", "a fortnight ago", "in the past
    three months" / "the past fortnight" (up to ``today``); a vague count ("a few days
    ago", "several weeks ago") names the stretch from twice as far back to one less."""
    out: list[tuple[int, int, Span]] = []
    taken = _Read()
    for pattern in _RELATIVE:
        taken.settle()
        for match in pattern.finditer(text):
            if taken.overlaps(*match.span()):
                continue
            try:
                days = _relative(match, today)
            except (OverflowError, ValueError):  # (before year 1 or after 9999: no such day)
                continue
            if days is not None:
                taken.add(*match.span())
                out.append((match.start(), match.end(), _between(*days)))
    return sorted(out, key=lambda found: found[0])


def _relative(match: re.Match[str], today: date) -> tuple[date, date] | None:
    """The first and last day ``match`` names (see :func:`relative_spans`)."""
    groups = match.groupdict()
    if match.re is _FORTNIGHT:
        return today - timedelta(days=14), today
    if match.re is _WEEKEND:
        saturday = _last(today, calendar.SATURDAY)
        return saturday, saturday + timedelta(days=1)
    if groups.get("day"):
        back = 1 if groups["day"].lower() in ("yesterday", "last night") else 0
        back += 1 if match.group(0).lower().startswith("the day before") else 0
        day = today - timedelta(days=back)
        return day, day
    count = _count(groups.get("n"))
    if groups.get("weekday"):
        day = _last(today, _WEEKDAYS[groups["weekday"].lower()])
        day -= timedelta(weeks=max(count or 1, 1) - 1)
        return day, day
    unit = groups["unit"].lower()
    if count is not None:
        if match.re is _PAST:
            return _back(today, unit, count), today
        if " ".join(groups["n"].lower().split()) in _VAGUE:
            first, _ = _whole(_back(today, unit, 2 * count), unit)
            _, last = _whole(_back(today, unit, count - 1), unit)
            return first, last
        return _whole(_back(today, unit, count), unit)
    which = groups["which"].lower()
    if unit in _WEEKDAYS:  # "last Saturday": the one before today
        day = _last(today, _WEEKDAYS[unit])
        return day, day
    if which == "this":
        return _whole(today, unit)
    if unit == "weekend":
        saturday = _last(today, calendar.SATURDAY)
        return saturday, saturday + timedelta(days=1)
    return _whole(_back(today, unit, 1), unit)


def _count(text: str | None) -> int | None:
    """The number a count names ("10", "three", "a few": 3); None without one."""
    if text is None:
        return None
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _last(today: date, weekday: int) -> date:
    """The last day before ``today`` that falls on ``weekday`` (Monday 0)."""
    return today - timedelta(days=(today.weekday() - weekday) % 7 or 7)


def _back(today: date, unit: str, count: int) -> date:
    """``today`` less ``count`` days, weeks, months or years (a month's day clamped)."""
    if unit == "day":
        return today - timedelta(days=count)
    if unit.startswith("week") or unit == "fortnight":
        return today - timedelta(weeks=count * (2 if unit == "fortnight" else 1))
    months = count * (12 if unit == "year" else 1)
    year, month = divmod(today.year * 12 + today.month - 1 - months, 12)
    return date(year, month + 1, min(today.day, _days_in(year, month + 1)))


def _whole(day: date, unit: str) -> tuple[date, date]:
    """The day, week (Monday to Sunday), month or year ``day`` falls in."""
    if unit == "day":
        return day, day
    if unit.startswith("week") or unit == "fortnight":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=6)
    if unit == "month":
        return day.replace(day=1), day.replace(day=_days_in(day.year, day.month))
    return date(day.year, 1, 1), date(day.year, 12, 31)


def _between(first: date, last: date) -> Span:
    """The span of the days from ``first`` to ``last`` (at most a year apart)."""
    return Span(last.year, first.month, first.day, last.day, last.month)
