"""Reading the time a question names in its own words (recall/timecue/words.py). Pure."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from chitta.recall.timecue.cue import period_of
from chitta.recall.timecue.words import read_when

#: A Tuesday.
NOW = int(datetime(2023, 5, 30, 3, 16, tzinfo=UTC).timestamp() * 1000)


def always(start: int, end: int) -> bool:
    return True


def days(text: str, holds=always) -> tuple[date, date] | None:
    """The period the phrase names, as its first day and the day after its last."""
    cue = read_when(text, NOW, holds)
    if cue is None:
        return None
    period = period_of(cue, NOW, None)
    assert period is not None
    first, end = (datetime.fromtimestamp(ms / 1000, UTC) for ms in (period.start_ms,
                                                                    period.end_ms))  # fmt: skip
    return first.date(), end.date()


@pytest.mark.parametrize(
    "text",
    [
        "What painting did Melanie show Caroline on October 13, 2023?",
        "What did Gina find for her clothing store on 13 October, 2023?",
        "What book did Tim finish reading on 13th October 2023?",
        "what did we decide on the 13th of October 2023",
    ],
)
def test_a_full_date_names_its_day(text: str) -> None:
    assert days(text) == (date(2023, 10, 13), date(2023, 10, 14))
    assert read_when(text, NOW, always).confidence == "likely"


def test_iso_dates_as_agents_write_them() -> None:
    assert days("what broke in the deploy of 2023-10-13?") == (date(2023, 10, 13),
                                                               date(2023, 10, 14))  # fmt: skip
    assert days("the incidents of 2022-07") == (date(2022, 7, 1), date(2022, 8, 1))
    # Not a date: a month 13, a 30 February, digits inside a version or an identifier.
    assert days("what is in 2023-13-01?") is None
    assert days("the 2023-02-30 report") is None
    assert days("release v1.2023-10-13 and build-2023-10") is None


def test_a_month_and_year_name_the_month() -> None:
    assert days("Where did Joanna travel to in July 2022?") == (date(2022, 7, 1), date(2022, 8, 1))
    assert days("the release of December, 2022") == (date(2022, 12, 1), date(2023, 1, 1))


def test_a_month_alone_is_the_latest_such_month_that_holds_memories() -> None:
    # June 2023 lies after now; June 2022 is the latest one before it.
    assert days("When did Melanie go camping in June?") == (date(2022, 6, 1), date(2022, 7, 1))

    # February 2023 holds nothing, so the February the store remembers: 2021's.
    def only_2021(start: int, end: int) -> bool:
        return datetime.fromtimestamp(start / 1000, UTC).year == 2021

    february = days("Which did I service first in February?", only_2021)
    assert february == (date(2021, 2, 1), date(2021, 3, 1))
    assert days("what happened in February?", lambda start, end: False) is None
    assert days("the gig on March 3") == (date(2023, 3, 3), date(2023, 3, 4))


def test_may_and_march_the_verbs_are_not_months() -> None:
    assert days("What may I have said about the march to the sea?") is None
    assert days("What did I say in May?") == (date(2023, 5, 1), date(2023, 6, 1))


def test_a_year_is_vague() -> None:
    cue = read_when("How many times has Melanie gone to the beach in 2023?", NOW, always)
    assert cue is not None and cue.confidence == "vague"
    assert days("in summer 2021") == (date(2021, 1, 1), date(2022, 1, 1))


def test_words_relative_to_now() -> None:
    assert days("what did I cook yesterday") == (date(2023, 5, 29), date(2023, 5, 30))
    assert days("what did I bake in the past two weeks?") == (date(2023, 5, 16), date(2023, 5, 31))
    assert days("the concerts over the last 2 months") == (date(2023, 3, 31), date(2023, 5, 31))
    assert days("where did I go last year?") == (date(2022, 1, 1), date(2023, 1, 1))
    assert days("Where did Caroline move from 4 years ago?") == (date(2019, 1, 1),
                                                                 date(2020, 1, 1))  # fmt: skip
    # "last Saturday" on a Tuesday is three days back; "last Tuesday" a week back.
    assert days("the museum last Saturday") == (date(2023, 5, 27), date(2023, 5, 28))
    assert days("the museum last Tuesday") == (date(2023, 5, 23), date(2023, 5, 24))
    ago = read_when("what did we ship three weeks ago", NOW, always)
    assert ago is not None and (ago.unit, ago.value) == ("weeks", 3)
    assert read_when("what did we ship a month ago", NOW, always).value == 1  # type: ignore[union-attr]
    last_week = read_when("What event did John volunteer at last weekend?", NOW, always)
    assert last_week is not None and (last_week.unit, last_week.value) == ("weeks", 1)


def test_the_most_exact_phrase_wins_and_no_phrase_is_no_cue() -> None:
    # A full date beats the month-and-year reading of its own words and a later relative one.
    assert days("on 8 December 2023, two weeks ago") == (date(2023, 12, 8), date(2023, 12, 9))
    assert read_when("why did we choose SQLite over a custom log?", NOW, always) is None
    # No such day: the month and year its words also name.
    assert days("what's on the 31 February 2023 list?") == (date(2023, 2, 1), date(2023, 3, 1))
    assert read_when("we met 0 days ago", NOW, always) is None
