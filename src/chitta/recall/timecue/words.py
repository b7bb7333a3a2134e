"""The time a question names in its own words, read as a time cue (seed 002 §2.1's shape).

"What did we decide on 8 December 2023?", "… on 2023-12-08?", "… in July 2022?", "… in
February?", "… two weeks ago?", "… in the past two months?": when the question itself names
a time, that time is a cue the caller did not have to pass. :func:`read_when` reads the
first such phrase, most exact kind first (a full date, a month and year, a month, a year,
then words relative to now), and returns the :class:`~chitta.recall.timecue.cue.TimeCue` it
means; ``None`` when the question names no time. Pure, but for ``holds``, which says whether
the scope has any memory in a span: a month named without a year is the latest such month,
at or before now, that holds memories (a user asking "in February" means the February they
remember).

Confidence follows the words: a date or a month names its span but not where the memory
was told about it (a Monday's session about the weekend before), so ``likely`` (half the
span's margin each side, §2.7); a year or a season, ``vague``. Months and days are read in
UTC, as every date in chitta.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from chitta.recall.timecue.cue import TimeCue

DAY_MS = 86_400_000
#: How many years back a month named without a year is looked for.
MONTH_YEARS_BACK = 20
_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
#: A month's name; "May" and "March" are also verbs: those two are months only when
#: capitalised (also read by recall/lanes/dated.py).
MONTH = (
    r"(?P<month>(?i:january|february|april|june|july|august|september|october|november|december)"
    r"|May|March)"
)
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
}  # fmt: skip
_COUNT = (
    r"(?P<n>\d{1,3}|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_I = re.IGNORECASE

_FULL_DATE = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{MONTH},?\s+{_YEAR}\b"),
    re.compile(rf"\b{MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
)
_MONTH_YEAR = re.compile(rf"\b{MONTH},?\s+{_YEAR}\b")
# ISO 8601, as agents and logs write dates: 2026-11-30 (a day), 2026-11 (a month).
_ISO_DAY = re.compile(
    r"(?<![\w.-])(?P<year>(?:19|20)\d{2})-(?P<month>\d{2})-(?P<day>\d{2})(?![\w-])"
)
_ISO_MONTH = re.compile(r"(?<![\w.-])(?P<year>(?:19|20)\d{2})-(?P<month>0[1-9]|1[0-2])(?![\w-])")
_MONTH_ALONE = re.compile(
    rf"\b(?i:in|on|during|since|of|by|around|until|through|from|early|late|mid|before|after)"
    rf"\s+(?:(?i:the\s+)?(?i:beginning|start|end|middle)\s+of\s+)?{MONTH}\b(?:\s+{_DAY}\b)?"
)
_YEAR_ALONE = re.compile(
    rf"\b(?i:in|during|since|of|summer|winter|spring|fall|autumn|year)\s+{_YEAR}\b(?![-/.]\d)"
)
#: A count of days, weeks, months or years ago ("two weeks ago", "a few days ago").
AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _I)
_PAST = re.compile(
    rf"\b(?:in|over|during|for|within)\s+the\s+(?:past|last)\s+(?:{_COUNT}\s+)?{_UNIT}\b", _I
)
_LAST = re.compile(r"\b(?P<which>yesterday|last\s+(?P<what>week(?:end)?|month|year|"
                   r"monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", _I)  # fmt: skip


def read_when(text: str, now_ms: int, holds: Callable[[int, int], bool]) -> TimeCue | None:
    """The time cue ``text`` names, read against ``now_ms``; ``None`` when it names none.

    ``holds(start_ms, end_ms)`` says whether the scope has memories in ``[start, end)``
    (only asked for a month named without a year).
    """
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    for read in (_full_date, _month_year, _month_alone, _year_alone, _relative):
        cue = read(text, now, holds)
        if cue is not None:
            return cue
    return None


def _full_date(text: str, now: datetime, holds: Callable[[int, int], bool]) -> TimeCue | None:
    for pattern in (*_FULL_DATE, _ISO_DAY):
        for m in pattern.finditer(text):
            day = _date(int(m["year"]), _month(m["month"]), int(m["day"]))
            if day is not None:
                return _span("likely", day, day + timedelta(days=1))
    return None


def _month_year(text: str, now: datetime, holds: Callable[[int, int], bool]) -> TimeCue | None:
    m = _MONTH_YEAR.search(text) or _ISO_MONTH.search(text)
    if m is None:
        return None
    first = date(int(m["year"]), _month(m["month"]), 1)
    return _span("likely", first, _next_month(first))


def _month_alone(text: str, now: datetime, holds: Callable[[int, int], bool]) -> TimeCue | None:
    m = _MONTH_ALONE.search(text)
    if m is None:
        return None
    month = _month(m["month"])
    for year in range(now.year, now.year - MONTH_YEARS_BACK, -1):
        first = date(year, month, 1)
        start, end = _ms(first), _ms(_next_month(first))
        if start > now.timestamp() * 1000 or not holds(start, end):
            continue
        day = _date(year, month, int(m["day"])) if m["day"] else None
        if day is not None:
            return _span("likely", day, day + timedelta(days=1))
        return _span("likely", first, _next_month(first))
    return None


def _year_alone(text: str, now: datetime, holds: Callable[[int, int], bool]) -> TimeCue | None:
    m = _YEAR_ALONE.search(text)
    if m is None:
        return None
    year = int(m["year"])
    return _span("vague", date(year, 1, 1), date(year + 1, 1, 1))


def _relative(text: str, now: datetime, holds: Callable[[int, int], bool]) -> TimeCue | None:
    if (m := AGO.search(text)) is not None:
        n, unit = _NUMBERS.get(m["n"].lower()) or int(m["n"]), m["unit"].lower()
        if unit == "year":
            year = now.year - n
            return _span("vague", date(year, 1, 1), date(year + 1, 1, 1)) if n >= 1 else None
        return TimeCue("likely", unit=f"{unit}s", value=n) if n >= 1 else None
    if (m := _PAST.search(text)) is not None:
        n = _NUMBERS.get((m["n"] or "one").lower()) or int(m["n"])
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[m["unit"].lower()] * max(n, 1)
        today = now.date() + timedelta(days=1)
        return _span("likely", today - timedelta(days=days + 1), today)
    if (m := _LAST.search(text)) is not None:
        return _last(m["which"].lower(), (m["what"] or "").lower(), now)
    return None


def _last(which: str, what: str, now: datetime) -> TimeCue | None:
    today = now.date()
    if which == "yesterday":
        return _span("likely", today - timedelta(days=1), today)
    if what in ("week", "weekend"):
        return TimeCue("likely", unit="weeks", value=1)
    if what == "month":
        return TimeCue("likely", unit="months", value=1)
    if what == "year":
        return _span("vague", date(today.year - 1, 1, 1), date(today.year, 1, 1))
    back = (today.weekday() - _WEEKDAYS[what]) % 7 or 7  # "last Monday" on a Monday: a week ago
    day = today - timedelta(days=back)
    return _span("likely", day, day + timedelta(days=1))


def _span(confidence: str, first: date, end: date) -> TimeCue:
    return TimeCue(confidence, after_ms=_ms(first), before_ms=_ms(end))  # type: ignore[arg-type]


def _month(name: str) -> int:
    """A month's number from its name or its two digits ("07"); 0 for "13" and the like."""
    if name.isdigit():
        return int(name) if 1 <= int(name) <= 12 else 0
    return _MONTHS[name.lower()]


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:  # "31 February", "2026-13-01": not a date, so not a cue
        return None


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)
