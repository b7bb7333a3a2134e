"""``reconstruct``: an answer made of items that quote the stored records behind them.

DESIGN.md §4 ("Other reads") and issue 7, part 6: where ``recall`` returns ranked memories,
``reconstruct`` returns what a caller can put in front of a model as it is — each item quotes
one stored record, names it (its ref, kind, realm, time) and says why it was recalled, and
the quotes together stay within a character budget. No text is generated: every character
of a quote is the record's own. Pure: it takes a finished recall's hits.

The budget is shared in rank order: each record is quoted whole while it fits; the first one
that does not is cut at a word boundary (and marked ``truncated``) if at least
:data:`MIN_QUOTE` characters remain; the records after that are listed in ``omitted``, by
ref, so the caller knows the answer holds more than it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chitta.errors import BadArgument
from chitta.validate import format_time

if TYPE_CHECKING:
    from chitta.recall.result import Hit

DEFAULT_BUDGET = 2000
MIN_BUDGET = 100
MAX_BUDGET = 100_000
#: A record cut shorter than this is left out rather than quoted as a fragment.
MIN_QUOTE = 40
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Item:
    """One quoted record."""

    ref: str
    kind: str
    realm: str
    when: str | None  # the record's event time, else when it was stored (ISO 8601)
    quote: str
    truncated: bool
    reason: str  # the lanes that recalled it, e.g. "sem+kw"
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "realm": self.realm, "when": self.when,
                "quote": self.quote, "truncated": self.truncated, "reason": self.reason,
                "score": round(self.score, 6)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """A reconstruct's answer: its items, the refs left out, and the recall behind it."""

    items: tuple[Item, ...]
    omitted: tuple[str, ...]
    budget: int
    recall: Any  # the RecallResult the items were read from

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape (the trace, when asked for, is added by the caller)."""
        conf = self.recall.confidence
        return {
            "query": self.recall.query,
            "items": [item.as_dict() for item in self.items],
            "omitted": list(self.omitted),
            "budget": self.budget,
            "used": sum(len(item.quote) for item in self.items),
            "confidence": None if conf is None else conf.as_dict(),
        }


def check_budget(budget: object) -> int:
    """The character budget, or a :class:`BadArgument` saying what it must be."""
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise BadArgument(f"budget must be a whole number of characters, got {budget!r}")
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise BadArgument(f"budget must be between {MIN_BUDGET} and {MAX_BUDGET}, got {budget}")
    return budget


def items_within(hits: Sequence[Hit], budget: int) -> tuple[list[Item], list[str]]:
    """The hits as quoted items within ``budget`` characters of quotes, and the refs left out."""
    budget = check_budget(budget)
    items: list[Item] = []
    omitted: list[str] = []
    left = budget
    for hit in hits:
        m = hit.memory
        text = m.content
        if omitted or left < min(len(text), MIN_QUOTE):
            omitted.append(m.id)
            continue
        quote, cut = (text, False) if len(text) <= left else (_cut(text, left), True)
        when = format_time(m.event_time if m.event_time is not None else m.created_at)
        score = hit.final if hit.final is not None else hit.score
        items.append(Item(m.id, str(m.kind), m.realm, when, quote, cut, hit.reason, score))
        left -= len(quote)
    return items, omitted


def _cut(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` characters at a word boundary, with an ellipsis."""
    head = text[: max(room - len(ELLIPSIS), 0)]
    space = head.rfind(" ")
    if space >= len(head) // 2:  # cut at a word unless that throws away half the room
        head = head[:space]
    return head.rstrip(" ,;:.-") + ELLIPSIS
