"""Calendar dates named in queries and read from stored date fields."""

from __future__ import annotations

from datetime import date

from engram.recall._dates import Span, parse, spans


def test_days_months_and_years_named_in_a_question() -> None:
    assert spans("Which city was Calvin at on October 3, 2023?") == [Span(2023, 10, 3, 3)]
    assert spans("What did Maria plan on the evening of 7 July, 2023?") == [Span(2023, 7, 7, 7)]
    assert spans("Where did Jolene spend most of September 2023?") == [Span(2023, 9)]
    assert spans("When did Melanie go camping in June?") == [Span(None, 6)]
    assert spans("Which country did James visit in 2021?") == [Span(2021, None)]
    assert spans("the 3rd of Dec. and Mar 4") == [Span(None, 12, 3, 3), Span(None, 3, 4, 4)]


def test_words_that_are_not_dates() -> None:
    assert spans("What did Maria and Mayra say? may we go") == []
    assert spans("How many pets does Andrew have?") == []
    assert spans("room 12345 and 3 apples") == []


def test_stored_date_fields() -> None:
    assert parse("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse("2023/05/20 (Sat) 02:21") == date(2023, 5, 20)
    assert parse("2024-02-29") == date(2024, 2, 29)
    assert parse("2024-02-29T10:30:00+00:00") == date(2024, 2, 29)
    assert parse("May 2023") is None
    assert parse("") is None


def test_a_span_holds_its_days_and_the_slack_after_them() -> None:
    october = Span(2023, 10)
    assert october.contains(date(2023, 10, 31))
    assert not october.contains(date(2023, 11, 3))
    assert october.contains(date(2023, 11, 3), slack_days=7)
    assert not october.contains(date(2023, 9, 30), slack_days=7)
    day = Span(2023, 10, 3, 3)
    assert day.contains(date(2023, 10, 4), slack_days=1)
    assert not day.contains(date(2023, 10, 2), slack_days=7)
    assert Span(None, 6).contains(date(2021, 6, 15))
    assert Span(2022, None).contains(date(2022, 12, 31))
    assert not Span(2022, None).contains(date(2023, 1, 1))


def test_seasons_need_their_year() -> None:
    assert spans("What happened towards the end of summer 2023?") == [Span(2023, 6, last_month=8)]
    assert spans("In what country was Jolene during Summer of 2022?") == [
        Span(2022, 6, last_month=8)
    ]
    assert spans("Did he fall off his bike?") == []
    winter = spans("winter 2023")[0]
    assert winter.contains(date(2022, 12, 20)) and winter.contains(date(2023, 2, 28))
    assert not winter.contains(date(2023, 3, 1)) and not winter.contains(date(2023, 12, 1))


SATURDAY = date(2023, 3, 25)


def _days(text: str, today: date = SATURDAY) -> list[tuple[date, date]]:
    return [s._range(s.year or today.year) for s in spans(text, today)]


def test_times_named_relative_to_the_day_a_question_is_asked() -> None:
    assert _days("What kitchen appliance did I buy 10 days ago?") == [
        (date(2023, 3, 15), date(2023, 3, 15))
    ]
    assert _days("What did I cook yesterday?") == [(date(2023, 3, 24), date(2023, 3, 24))]
    assert _days("the day before yesterday") == [(date(2023, 3, 23), date(2023, 3, 23))]
    assert _days("What cocktail did I try last weekend?") == [
        (date(2023, 3, 18), date(2023, 3, 19))
    ]
    assert _days("Who did I meet last week?") == [(date(2023, 3, 13), date(2023, 3, 19))]
    assert _days("What did I buy three weeks ago?") == [(date(2023, 2, 27), date(2023, 3, 5))]
    assert _days("Where was I two months ago?") == [(date(2023, 1, 1), date(2023, 1, 31))]
    assert _days("last month") == [(date(2023, 2, 1), date(2023, 2, 28))]
    assert _days("last Monday") == [(date(2023, 3, 20), date(2023, 3, 20))]
    assert _days("this year") == [(date(2023, 1, 1), date(2023, 12, 31))]
    assert _days("trips in the past three months") == [(date(2022, 12, 25), date(2023, 3, 25))]
    assert _days("a couple of days ago") == [(date(2023, 3, 23), date(2023, 3, 23))]
    assert _days("What did I eat on Tuesday?") == [(date(2023, 3, 21), date(2023, 3, 21))]
    assert _days("What did I watch last night?") == [(date(2023, 3, 24), date(2023, 3, 24))]
    assert _days("Who called this morning?") == [(date(2023, 3, 25), date(2023, 3, 25))]
    assert _days("What do I do on Tuesdays?") == []  # a habit, not a day
    assert _days("What did I buy a fortnight ago?") == [(date(2023, 3, 6), date(2023, 3, 12))]
    assert _days("Who did I see in the past fortnight?") == [(date(2023, 3, 11), date(2023, 3, 25))]
    assert _days("What did I cook over the weekend?") == [(date(2023, 3, 18), date(2023, 3, 19))]
    assert _days("What did I do two Saturdays ago?") == [(date(2023, 3, 11), date(2023, 3, 11))]


def test_a_vague_count_names_a_stretch_around_it() -> None:
    """ "A few days ago" is not exactly three: from twice as far back to one unit less."""
    assert _days("What did I order a few days ago?") == [(date(2023, 3, 19), date(2023, 3, 23))]
    assert _days("several weeks ago") == [(date(2023, 2, 6), date(2023, 3, 12))]


def test_relative_times_need_the_day_asked_and_cross_the_year() -> None:
    assert spans("What did I buy 10 days ago?") == []
    assert _days("last week", date(2024, 1, 3)) == [(date(2023, 12, 25), date(2023, 12, 31))]
    assert _days("in the past 10 days", date(2024, 1, 3)) == [
        (date(2023, 12, 24), date(2024, 1, 3))
    ]
    assert _days("June 3, 2023 and yesterday") == [
        (date(2023, 6, 3), date(2023, 6, 3)),
        (date(2023, 3, 24), date(2023, 3, 24)),
    ]
    assert spans("I have a few questions", SATURDAY) == []


def test_a_relative_time_beyond_the_calendar_names_nothing() -> None:
    """A recall as of the first or last day there is (``as_of=datetime.min``) reads no day
    before or after it, and does not fail."""
    assert spans("What did I do last week?", date(1, 1, 1)) == []
    assert spans("three days ago", date(1, 1, 2)) == []
    assert _days("this week", date(9999, 12, 31)) == []
