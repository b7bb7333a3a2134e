"""The time cue: reading a caller's "when", the period it names, its margins and its steps.

Seed 002 §2, policy ``cued-v0.3``. A caller may say roughly when what it asks about happened::

    {"after": "2026-08-01", "before": "2026-08-31", "confidence": "likely"}
    {"ago": {"unit": "weeks", "value": 3}, "confidence": "sure"}
    {"ago": "long_ago", "confidence": "vague"}

The cue becomes a :class:`Period` (§2.7), widened by a margin its confidence sets (§2.1); the
confidence also sets ``L``, how far the cue may move a row and how many seats it holds (§2.3,
§2.11). One revision widens the period by one confidence step (§2.5). A cue whose own period
starts within the last 24 hours is not used (§2.8). The move and the seats are in
:mod:`chitta.recall.timecue.move`.

Pure: no store access. The caller supplies ``now`` and the scope's oldest record time, all in
milliseconds since the epoch (UTC). Periods are half-open: ``start_ms <= t < end_ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from types import MappingProxyType
from typing import Any, Literal, cast, get_args

from chitta.errors import BadArgument, BadDate
from chitta.validate import format_time

POLICY = "cued-v0.3"
Confidence = Literal["sure", "likely", "vague"]
CONFIDENCES: tuple[Confidence, ...] = get_args(Confidence)
#: §2.3: L, the places a cued row may rise and (§2.11) the seats the cue holds.
BOUND: Mapping[str, int] = MappingProxyType({"sure": 3, "likely": 2, "vague": 1})
#: §2.5: the step one revision widens to; ``None``: no wider period, the loop stops.
NEXT_STEP: Mapping[str, Confidence | None] = MappingProxyType(
    {"sure": "likely", "likely": "vague", "vague": None}
)
#: §2.1: each side of the period is widened by this fraction of its length.
MARGIN: Mapping[str, tuple[int, int]] = MappingProxyType(
    {"sure": (0, 1), "likely": (1, 2), "vague": (1, 1)}
)

DAY_MS = 86_400_000
#: §2.7: a month is 30 days.
UNIT_MS: Mapping[str, int] = MappingProxyType(
    {"days": DAY_MS, "weeks": 7 * DAY_MS, "months": 30 * DAY_MS}
)
LONG_AGO = "long_ago"
#: A relative cue may reach this far back (1,000 years); chitta holds no time before 1900.
MAX_AGO_MS = 365_250 * DAY_MS
#: §2.8: a cue whose own period starts no earlier than this before now is not used.
RECENT_ONLY_MS = DAY_MS
RECENT_ONLY = "recent_only"
#: §2.7: the revision's time limit, from the start of the recall
#: (``CHITTA_RECALL_CUE_TIME_LIMIT_MS``; read by the recall's settings, not here).
CUE_TIME_LIMIT_MS = 1000

_FIELDS = ("after", "before", "ago", "confidence")
_AGO_FIELDS = ("unit", "value")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MS = (datetime(1900, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
_MAX_MS = (datetime(3000, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
_DATE_HINT = "use an ISO date (2026-08-31) or date and time (2026-08-31T13:45, optionally +01:00)"


@dataclass(frozen=True, slots=True)
class TimeCue:
    """A read cue: an absolute period (either end may be open), ``n`` units ago, or long ago.

    ``after_ms`` is the first instant included, ``before_ms`` the first excluded (a date as
    ``before`` has been turned into the start of the next day).
    """

    confidence: Confidence
    after_ms: int | None = None
    before_ms: int | None = None
    unit: str | None = None
    value: int | None = None
    long_ago: bool = False

    @property
    def kind(self) -> Literal["absolute", "relative", "long_ago"]:
        if self.long_ago:
            return "long_ago"
        return "relative" if self.unit is not None else "absolute"


@dataclass(frozen=True, slots=True)
class Period:
    """A half-open span of time in ms since the epoch: ``start_ms <= t < end_ms``."""

    start_ms: int
    end_ms: int

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise ValueError(f"a period cannot end ({self.end_ms}) before it starts")

    @property
    def length_ms(self) -> int:
        return self.end_ms - self.start_ms

    def contains(self, ms: int) -> bool:
        return self.start_ms <= ms < self.end_ms

    def as_dict(self) -> dict[str, str | None]:
        """The period in the cue's own words, so a caller can pass it back as a cue."""
        return {"after": format_time(self.start_ms), "before": format_time(self.end_ms)}


# --- reading a cue -----------------------------------------------------------------------------


def parse_time_cue(obj: object) -> TimeCue:
    """A :class:`TimeCue` from its JSON shape (§2.1), or an error naming the part that is wrong.

    ``null`` for ``after``, ``before`` or ``ago`` means the field is not given. Dates are read
    as whole UTC days; date-times without an offset as UTC.
    """
    if isinstance(obj, TimeCue):
        return obj
    if not isinstance(obj, Mapping):
        raise BadArgument(
            f"time_cue must be an object with confidence and a period, got {type(obj).__name__}"
        )
    for key in obj:
        if key not in _FIELDS:
            raise BadArgument(
                f"time_cue.{key} is not a field of a time cue; the fields are "
                "after, before, ago and confidence"
            )
    confidence = _confidence(obj)
    after, before, ago = obj.get("after"), obj.get("before"), obj.get("ago")
    if ago is not None:
        if after is not None or before is not None:
            raise BadArgument(
                "time_cue.ago cannot be given with time_cue.after or time_cue.before: "
                "a cue is either absolute or relative to now"
            )
        if ago == LONG_AGO:
            return TimeCue(confidence, long_ago=True)
        unit, value = _ago(ago)
        return TimeCue(confidence, unit=unit, value=value)
    if after is None and before is None:
        raise BadArgument(
            "time_cue names no period: give time_cue.after and/or time_cue.before, or time_cue.ago"
        )
    after_ms = None if after is None else _instant(after, "time_cue.after", end=False)
    before_ms = None if before is None else _instant(before, "time_cue.before", end=True)
    if after_ms is not None and before_ms is not None and after_ms >= before_ms:
        raise BadDate(
            f"time_cue.after ({after!r}) is not earlier than time_cue.before ({before!r}): "
            "the period is empty"
        )
    return TimeCue(confidence, after_ms=after_ms, before_ms=before_ms)


def as_given(obj: object) -> dict[str, Any]:
    """A read cue as the caller gave it, in plain JSON (for the trace's ``request``): a
    mapping as it came, dates as ISO text; a :class:`TimeCue` in the cue's own words."""
    if isinstance(obj, TimeCue):
        if obj.long_ago:
            return {"ago": LONG_AGO, "confidence": obj.confidence}
        if obj.unit is not None:
            return {"ago": {"unit": obj.unit, "value": obj.value}, "confidence": obj.confidence}
        out: dict[str, Any] = {"confidence": obj.confidence}
        if obj.after_ms is not None:
            out["after"] = format_time(obj.after_ms)
        if obj.before_ms is not None:
            out["before"] = format_time(obj.before_ms)
        return out
    if not isinstance(obj, Mapping):
        raise BadArgument(f"time_cue must be an object, got {type(obj).__name__}")
    return {str(k): _plain(v) for k, v in obj.items()}


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, date):  # a datetime is a date too
        return value.isoformat()
    return value


def _confidence(obj: Mapping[Any, Any]) -> Confidence:
    if "confidence" not in obj:
        raise BadArgument("time_cue.confidence is required: sure, likely or vague")
    value = obj["confidence"]
    if isinstance(value, str) and value in CONFIDENCES:
        return cast(Confidence, value)
    raise BadArgument(f"time_cue.confidence {value!r} is not one of sure, likely, vague")


def _ago(ago: object) -> tuple[str, int]:
    if not isinstance(ago, Mapping):
        raise BadArgument(
            f"time_cue.ago {ago!r} is neither {LONG_AGO!r} nor an object "
            '{"unit": "days" | "weeks" | "months", "value": n}'
        )
    for key in ago:
        if key not in _AGO_FIELDS:
            raise BadArgument(
                f"time_cue.ago.{key} is not a field of ago; the fields are unit and value"
            )
    unit = ago.get("unit")
    if not isinstance(unit, str) or unit not in UNIT_MS:
        what = "is required" if unit is None else f"{unit!r} is not one of"
        raise BadArgument(f"time_cue.ago.unit {what}: days, weeks, months")
    value = ago.get("value")
    if value is None:
        raise BadArgument("time_cue.ago.value is required: a whole number of units, at least 1")
    # bool is an int in Python, and JSON's true is no number of days.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadArgument(f"time_cue.ago.value must be a whole number, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise BadArgument(f"time_cue.ago.value must be a whole number, got {value!r}")
    n = int(value)
    if n < 1:
        raise BadArgument(f"time_cue.ago.value must be at least 1, got {value!r}")
    if n * UNIT_MS[unit] > MAX_AGO_MS:
        raise BadArgument(f"time_cue.ago.value {n} {unit} reaches more than 1000 years back")
    return unit, n


def _instant(value: object, part: str, *, end: bool) -> int:
    """The ms a cue's end names. A date names its whole day (UTC): as ``after`` its first
    instant, as ``before`` the start of the next day, so the day itself is included. A
    date-time without an offset is read as UTC, as everywhere in chitta."""
    whole_day = True
    if isinstance(value, datetime):
        moment, whole_day = value, False
    elif isinstance(value, date):
        moment = datetime.combine(value, time())
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.combine(date.fromisoformat(text), time())
        except ValueError:
            try:
                moment, whole_day = datetime.fromisoformat(text), False
            except ValueError:
                raise BadDate(f"{part} {value!r} is not a date; {_DATE_HINT}") from None
    else:
        raise BadDate(f"{part} must be ISO 8601 text, got {type(value).__name__}; {_DATE_HINT}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # Integer arithmetic: float timestamps lose a millisecond now and then.
    ms = (moment - _EPOCH) // timedelta(milliseconds=1)
    if not _MIN_MS <= ms < _MAX_MS:
        raise BadDate(f"{part} {value!r} is outside the years 1900-2999")
    return ms + DAY_MS if end and whole_day else ms


# --- the period, its margins and steps ---------------------------------------------------------


def period_of(cue: TimeCue, now_ms: int, scope_oldest_ms: int | None) -> Period | None:
    """The cue's own period, before any margin (§2.7), or ``None`` when it needs the scope's
    oldest record and the scope holds none.

    - ``{"unit": u, "value": n}``: one unit long, centred ``n`` units before now, ending no
      later than now (a month is 30 days).
    - ``long_ago``: the oldest third of the span from the scope's oldest record to now.
    - absolute: an open ``after`` is closed by the scope's oldest record, an open ``before``
      by now; a closed end that lies beyond the one that closes the other side leaves the
      period empty (it then holds nothing, and no margin widens it).
    """
    if cue.long_ago:
        if scope_oldest_ms is None:
            return None
        oldest = min(scope_oldest_ms, now_ms)
        return Period(oldest, oldest + (now_ms - oldest) // 3)
    if cue.unit is not None and cue.value is not None:
        unit = UNIT_MS[cue.unit]
        centre = now_ms - cue.value * unit
        end = min(centre + unit // 2, now_ms)
        return Period(min(centre - unit // 2, end), end)
    if cue.after_ms is not None and cue.before_ms is not None:
        return Period(cue.after_ms, cue.before_ms)
    if cue.after_ms is not None:
        return Period(cue.after_ms, max(cue.after_ms, now_ms))
    if cue.before_ms is None:  # parse_time_cue never builds such a cue
        raise ValueError("a time cue needs a period")
    if scope_oldest_ms is None:
        return None
    return Period(min(scope_oldest_ms, cue.before_ms), cue.before_ms)


def widen(period: Period, confidence: Confidence) -> Period:
    """The period with ``confidence``'s margin (§2.1): ``sure`` as given, ``likely`` half its
    length on each side, ``vague`` its whole length on each side (rounded down to the ms)."""
    num, den = MARGIN[confidence]
    margin = period.length_ms * num // den
    return Period(period.start_ms - margin, period.end_ms + margin)


def is_recent_only(period: Period, now_ms: int) -> bool:
    """§2.8: the cue's own period starts no earlier than 24 hours before now, so it points
    only at today or the future, and the recall does not use it."""
    return period.start_ms >= now_ms - RECENT_ONLY_MS


@dataclass(frozen=True, slots=True)
class Stage:
    """One search of the cue arm: the confidence step, the period with its margin, and L."""

    confidence: Confidence
    period: Period
    bound: int


@dataclass(frozen=True, slots=True)
class CuePlan:
    """What a cue asks of a recall: its own period, whether it is ignored, and the stages.

    ``stages[0]`` is the search at the cue's confidence; ``stages[1]``, when present, the one
    revision (§2.5), run only if the first found nothing and the time limit allows. No stage
    at all: the cue is ignored (``ignored``) or names no period in this scope (``period``
    is ``None``: the scope is empty), and the recall is that without a cue.
    """

    cue: TimeCue
    period: Period | None
    ignored: str | None
    stages: tuple[Stage, ...]


def plan_cue(cue: TimeCue, now_ms: int, scope_oldest_ms: int | None) -> CuePlan:
    """The cue's period, the recent-only rule, and its first stage and revision."""
    period = period_of(cue, now_ms, scope_oldest_ms)
    if period is None:
        return CuePlan(cue, None, None, ())
    if is_recent_only(period, now_ms):
        return CuePlan(cue, period, RECENT_ONLY, ())
    stages = [Stage(cue.confidence, widen(period, cue.confidence), BOUND[cue.confidence])]
    step = NEXT_STEP[cue.confidence]
    if step is not None:
        stages.append(Stage(step, widen(period, step), BOUND[step]))
    return CuePlan(cue, period, None, tuple(stages))


# --- the response ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CueReport:
    """The response's ``time_cue`` block (§2.7, §2.8).

    ``period`` is the period searched last (with its margin), or, when ``ignored``, the cue's
    own period. ``confidence`` is the step used; ``moved`` counts rows whose place changed,
    ``seats`` the rows the cue added. ``stopped`` says why a wanted revision did not run
    (``"time_limit"``) or could not (``"no_wider_period"``, a ``vague`` cue).
    """

    confidence: Confidence
    period: Period | None
    revised: bool = False
    moved: int = 0
    seats: int = 0
    ignored: str | None = None
    stopped: str | None = None
    policy: str = POLICY

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "policy": self.policy,
            "period": None if self.period is None else self.period.as_dict(),
            "confidence": self.confidence,
            "revised": self.revised,
            "moved": self.moved,
            "seats": self.seats,
        }
        if self.ignored is not None:
            out["ignored"] = self.ignored
        if self.stopped is not None:
            out["stopped"] = self.stopped
        return out


def unused_report(plan: CuePlan) -> CueReport:
    """The report of a cue that ran no stage: ignored, or no period in an empty scope."""
    return CueReport(plan.cue.confidence, plan.period, ignored=plan.ignored)
