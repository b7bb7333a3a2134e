"""The time cue on LoCoMo: the registered rule (docs/benchmarks.md, "The time cue on LoCoMo").

Which questions carry a cue, the cue each gets from its own text and its conversation's
session dates (never from the answer), the deliberately wrong cue, and the measures: evidence
up and down, and nDCG over the returned rows with the cue, without it, and without it but
with as many extra rows as the cue's seats. Pure functions; the command is cli_timecue.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from chitta.bench.locomo import Conversation, Question
from chitta.bench.score import ndcg_at

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
#: The registered expressions: a month name with an optional day before or after it and an
#: optional year; else a year alone.
MONTH_EXPR = re.compile(
    r"\b(?:(\d{1,2})\s+)?(" + "|".join(MONTHS) + r")\b(?:\s+(\d{1,2}))?(?:,?\s+(\d{4}))?"
)
YEAR_EXPR = re.compile(r"\b((?:19|20)\d{2})\b")
#: How far the wrong cue is moved.
WRONG_SHIFT = timedelta(days=183)


@dataclass(frozen=True, slots=True)
class Cue:
    """A cue as the recall takes it: whole days, inclusive, and a confidence word."""

    after: date
    before: date
    confidence: str

    def as_time_cue(self) -> dict[str, str]:
        return {"after": self.after.isoformat(), "before": self.before.isoformat(),
                "confidence": self.confidence}  # fmt: skip


def cue_for(question: Question, conversation: Conversation) -> Cue | None:
    """The registered cue of ``question``, or None when its text names no time."""
    sessions = [_day(ms) for _, ms in conversation.sessions if ms is not None]
    m = MONTH_EXPR.search(question.question)
    if m:
        day_text = m.group(1) or m.group(3)
        month = MONTHS.index(m.group(2)) + 1
        year = int(m.group(4)) if m.group(4) else _year_of_month(month, sessions)
        if year is None:
            return None
        if day_text and m.group(4):
            try:
                day = date(year, month, int(day_text))
            except ValueError:
                day = None
            if day is not None:
                return Cue(day, day, "sure")
        return Cue(date(year, month, 1), _month_end(year, month), "likely")
    y = YEAR_EXPR.search(question.question)
    if y:
        year = int(y.group(1))
        return Cue(date(year, 1, 1), date(year, 12, 31), "vague")
    return None


def wrong_cue(cue: Cue, conversation: Conversation) -> Cue:
    """The same period moved :data:`WRONG_SHIFT` later, or earlier when later would pass the
    conversation's last session; the same confidence."""
    sessions = [_day(ms) for _, ms in conversation.sessions if ms is not None]
    last = max(sessions) if sessions else cue.before
    shift = WRONG_SHIFT if cue.before + WRONG_SHIFT <= last else -WRONG_SHIFT
    return Cue(cue.after + shift, cue.before + shift, cue.confidence)


def best_position(ranked: Sequence[str], gold: Sequence[str]) -> int | None:
    """The 1-based position of the first gold turn among ``ranked``; None when none is."""
    wanted = set(gold)
    return next((i for i, turn in enumerate(ranked, start=1) if turn in wanted), None)


def movement(plain: Sequence[str], cued: Sequence[str], gold: Sequence[str]) -> int:
    """+1 when the cue brought the evidence up (or in), -1 down (or out), 0 when unmoved."""
    before, after = best_position(plain, gold), best_position(cued, gold)
    if before == after:
        return 0
    if before is None:
        return 1
    if after is None:
        return -1
    return 1 if after < before else -1


def ndcg_returned(ranked: Sequence[str], gold: Sequence[str]) -> float:
    """nDCG over every returned row (binary gain)."""
    return ndcg_at(list(dict.fromkeys(ranked)), set(gold), max(len(ranked), 1))


def _day(ms: int) -> date:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).date()


def _year_of_month(month: int, sessions: Sequence[date]) -> int | None:
    """The year of the latest session in ``month``, else of the latest session."""
    inside = [d for d in sessions if d.month == month]
    if inside:
        return max(inside).year
    return max(sessions).year if sessions else None


def _month_end(year: int, month: int) -> date:
    first_next = date(year + (month == 12), month % 12 + 1, 1)
    return first_next - timedelta(days=1)
