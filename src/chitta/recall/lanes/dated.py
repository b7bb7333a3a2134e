"""``dated``: for a question that asks when, the candidates whose text says when.

A memory that answers "When did Caroline go to the support group?" says when in its own words
("I went to the support group yesterday", "last Friday", "on 3 May"); the memories that only
resemble the question mostly do not. On the tuning halves of both development sets, 78 % of
LoCoMo's temporal questions' evidence turns and 87 % of LongMemEval's temporal-reasoning
ones hold such words, against 24 % and 29 % of the other turns in hybrid's top ten. This
lane does not search: when the question asks for a time or an order, it returns the
candidates the other lanes found (in their fused order) whose text names one, and rsf adds
its constant boost to each, so such a memory can pass a look-alike but none is brought in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chitta.recall.lanes.base import LaneContext
from chitta.recall.timecue.words import AGO, MONTH

_I = re.IGNORECASE
#: A question asking for a time, a span or an order.
_ASKS_WHEN = re.compile(
    r"^\W*when\b|\bwhen (?:did|does|do|was|were|is|will|has|have|had)\b"
    r"|\bwhat (?:date|day|year|month|week|time of year)\b|\bwhich (?:date|day|year|month)\b"
    r"|\bhow long (?:ago|before|after|since|did|had|has|have|was|were)\b"
    r"|\bhow many (?:days|weeks|months|years|hours)\b"
    r"|\b(?:which|what)\b.*\b(?:first|earlier|later|before|after)\b"
    r"|\bin what order\b|\bfrom first to last\b",
    _I,
)
#: Words that say when: relative days and periods, years, dates (spans ago and months are
#: the time cue's own patterns, timecue/words.py).
_SAYS_WHEN_ANY_CASE = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|the other day|earlier this \w+"
    r"|(?:last|next|this|past) (?:night|morning|evening|week(?:end)?|month|year|summer|winter"
    r"|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|several (?:days|weeks|months|years) ago|(?:19|20)\d\d|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b",
    _I,
)
#: Weekdays written as names, and months as the time cue reads them ("May", not "may").
_SAYS_WHEN_NAMED = re.compile(
    rf"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|{MONTH})\b"
)


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time, a span or an order of events."""
    return _ASKS_WHEN.search(question) is not None


def says_when(text: str) -> bool:
    """Whether ``text`` names a time: a relative day or period, a span ago, a weekday, a
    month, a year or a date."""
    return any(p.search(text) for p in (_SAYS_WHEN_ANY_CASE, AGO, _SAYS_WHEN_NAMED))


@dataclass(frozen=True, slots=True)
class DatedLane:
    name: str = "dated"
    derived: bool = True

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.seeds or not asks_when(ctx.query):
            return []
        loaded = ctx.memories(ctx.seeds)
        found = [(memory_id, 1.0) for memory_id in ctx.seeds
                 if (m := loaded.get(memory_id)) is not None and says_when(m.content)]  # fmt: skip
        return found[: ctx.depth]
