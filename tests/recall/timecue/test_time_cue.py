"""The time cue's core (seed 002 §2, cued-v0.3): reading cues, periods, margins, steps, the
recent-only rule, the bounded move, the seats and the cue arm's merge."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.errors import BadArgument, BadDate
from chitta.recall.timecue.cue import (
    BOUND,
    DAY_MS,
    POLICY,
    RECENT_ONLY,
    CuePlan,
    CueReport,
    Period,
    TimeCue,
    is_recent_only,
    parse_time_cue,
    period_of,
    plan_cue,
    unused_report,
    widen,
)
from chitta.recall.timecue.move import CUE_DEPTH, cue_ranks, merge_cue_lists, move, seats


def ms(text: str) -> int:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


NOW = ms("2026-09-15T12:00:00")
OLDEST = ms("2025-09-15T12:00:00")

# --- reading a cue -----------------------------------------------------------------------------


def test_absolute_cue_dates_name_whole_days() -> None:
    cue = parse_time_cue({"after": "2026-08-01", "before": "2026-08-31", "confidence": "sure"})
    assert cue == TimeCue("sure", after_ms=ms("2026-08-01"), before_ms=ms("2026-09-01"))
    assert cue.kind == "absolute"
    period = period_of(cue, NOW, OLDEST)
    assert period is not None
    assert period.contains(ms("2026-08-31T23:59:59.999"))  # before: the 31st is included
    assert not period.contains(ms("2026-09-01"))
    assert period.contains(ms("2026-08-01")) and not period.contains(ms("2026-07-31T23:59"))


def test_the_same_day_is_a_one_day_period() -> None:
    cue = parse_time_cue({"after": "2026-08-05", "before": "2026-08-05", "confidence": "sure"})
    assert period_of(cue, NOW, OLDEST) == Period(ms("2026-08-05"), ms("2026-08-06"))


def test_datetimes_are_instants_naive_ones_utc() -> None:
    cue = parse_time_cue(
        {"after": "2026-08-01T10:00", "before": "2026-08-01T13:00+02:00", "confidence": "likely"}
    )
    assert cue.after_ms == ms("2026-08-01T10:00Z")
    assert cue.before_ms == ms("2026-08-01T11:00Z")  # an instant: no whole day added


def test_datetime_before_is_exclusive_and_offsets_count() -> None:
    cue = parse_time_cue(
        {"after": "2026-08-01T08:00Z", "before": "2026-08-01T12:00+02:00", "confidence": "sure"}
    )
    assert period_of(cue, NOW, OLDEST) == Period(ms("2026-08-01T08:00Z"), ms("2026-08-01T10:00Z"))


def test_python_dates_and_datetimes_are_read_too() -> None:
    cue = parse_time_cue(
        {"after": date(2026, 8, 1), "before": datetime(2026, 8, 2, 6), "confidence": "vague"}
    )
    assert cue.after_ms == ms("2026-08-01") and cue.before_ms == ms("2026-08-02T06:00")


def test_relative_and_long_ago_cues() -> None:
    cue = parse_time_cue({"ago": {"unit": "weeks", "value": 3}, "confidence": "likely"})
    assert cue == TimeCue("likely", unit="weeks", value=3) and cue.kind == "relative"
    assert parse_time_cue({"ago": {"unit": "days", "value": 2.0}, "confidence": "sure"}).value == 2
    assert parse_time_cue({"ago": "long_ago", "confidence": "vague"}).kind == "long_ago"


def test_null_ends_are_not_given() -> None:
    cue = parse_time_cue({"after": None, "before": "2026-08-31", "ago": None, "confidence": "sure"})
    assert cue.after_ms is None and cue.before_ms == ms("2026-09-01")
    assert parse_time_cue(cue) is cue


@pytest.mark.parametrize(
    ("cue", "error", "part"),
    [
        ("2026-08-01", BadArgument, "time_cue must be an object"),
        (None, BadArgument, "time_cue must be an object"),
        ({"after": "2026-08-01"}, BadArgument, "time_cue.confidence is required"),
        ({"after": "2026-08-01", "confidence": "certain"}, BadArgument, "time_cue.confidence"),
        ({"after": "2026-08-01", "confidence": 1}, BadArgument, "time_cue.confidence"),
        ({"after": "2026-08-01", "confidence": "Sure"}, BadArgument, "time_cue.confidence"),
        ({"after": "2026-08-01", "when": "x", "confidence": "sure"}, BadArgument, "time_cue.when"),
        ({"confidence": "sure"}, BadArgument, "time_cue names no period"),
        ({"after": None, "confidence": "sure"}, BadArgument, "time_cue names no period"),
        (
            {"after": "2026-08-01", "ago": "long_ago", "confidence": "sure"},
            BadArgument,
            "time_cue.ago cannot be given with",
        ),
        ({"after": "August", "confidence": "sure"}, BadDate, "time_cue.after"),
        ({"after": "2026-08", "confidence": "sure"}, BadDate, "time_cue.after"),
        ({"before": "", "confidence": "sure"}, BadDate, "time_cue.before"),
        ({"before": 1_780_000_000_000, "confidence": "sure"}, BadDate, "time_cue.before"),
        ({"before": True, "confidence": "sure"}, BadDate, "time_cue.before"),
        ({"after": "1850-01-01", "confidence": "sure"}, BadDate, "time_cue.after"),
        ({"before": "3000-01-01", "confidence": "sure"}, BadDate, "time_cue.before"),
        (
            {"after": "2026-08-31", "before": "2026-08-01", "confidence": "sure"},
            BadDate,
            "time_cue.after",
        ),
        (
            {"after": "2026-08-01T10:00", "before": "2026-08-01T10:00", "confidence": "sure"},
            BadDate,
            "time_cue.after",
        ),
        ({"ago": "yesterday", "confidence": "sure"}, BadArgument, "time_cue.ago"),
        ({"ago": 3, "confidence": "sure"}, BadArgument, "time_cue.ago"),
        ({"ago": {"value": 3}, "confidence": "sure"}, BadArgument, "time_cue.ago.unit"),
        (
            {"ago": {"unit": "years", "value": 3}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.unit",
        ),
        (
            {"ago": {"unit": "day", "value": 3}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.unit",
        ),
        ({"ago": {"unit": "days"}, "confidence": "sure"}, BadArgument, "time_cue.ago.value"),
        (
            {"ago": {"unit": "days", "value": 0}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": -2}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": 1.5}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": True}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": "3"}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": float("nan")}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "months", "value": 20_000}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.value",
        ),
        (
            {"ago": {"unit": "days", "value": 3, "from": "now"}, "confidence": "sure"},
            BadArgument,
            "time_cue.ago.from",
        ),
    ],
)
def test_every_parse_error_names_its_part(cue: object, error: type, part: str) -> None:
    with pytest.raises(error) as raised:
        parse_time_cue(cue)
    assert str(raised.value).startswith(part), str(raised.value)


# --- periods -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("unit", "unit_ms"), [("days", 1), ("weeks", 7), ("months", 30)])
def test_relative_period_is_one_unit_centred_n_units_ago(unit: str, unit_ms: int) -> None:
    length = unit_ms * DAY_MS
    cue = TimeCue("sure", unit=unit, value=3)
    centre = NOW - 3 * length
    assert period_of(cue, NOW, OLDEST) == Period(centre - length // 2, centre + length // 2)
    assert period_of(cue, NOW, None) == period_of(cue, NOW, OLDEST)  # needs no scope


def test_one_unit_ago_ends_no_later_than_now() -> None:
    period = period_of(TimeCue("sure", unit="days", value=1), NOW, OLDEST)
    assert period == Period(NOW - DAY_MS * 3 // 2, NOW - DAY_MS // 2)
    assert period.end_ms <= NOW


def test_long_ago_is_the_oldest_third_of_the_scope() -> None:
    period = period_of(TimeCue("vague", long_ago=True), NOW, OLDEST)
    assert period == Period(OLDEST, OLDEST + (NOW - OLDEST) // 3)


def test_open_ends_are_closed_by_the_scope_and_now() -> None:
    after = TimeCue("sure", after_ms=ms("2026-08-01"))
    assert period_of(after, NOW, OLDEST) == Period(ms("2026-08-01"), NOW)
    before = TimeCue("sure", before_ms=ms("2026-01-01"))
    assert period_of(before, NOW, OLDEST) == Period(OLDEST, ms("2026-01-01"))


def test_ends_beyond_the_closing_side_leave_an_empty_period() -> None:
    # nothing in the scope is older than the cue's end; nothing is later than now
    assert period_of(TimeCue("likely", before_ms=OLDEST - 5), NOW, OLDEST) == Period(
        OLDEST - 5, OLDEST - 5
    )
    assert period_of(TimeCue("sure", after_ms=NOW + 5), NOW, OLDEST) == Period(NOW + 5, NOW + 5)


def test_an_empty_scope_has_no_period_only_where_one_needs_its_oldest_record() -> None:
    assert period_of(TimeCue("sure", long_ago=True), NOW, None) is None
    assert period_of(TimeCue("sure", before_ms=ms("2026-01-01")), NOW, None) is None
    assert period_of(TimeCue("sure", after_ms=ms("2026-08-01")), NOW, None) == Period(
        ms("2026-08-01"), NOW
    )
    plan = plan_cue(TimeCue("likely", long_ago=True), NOW, None)
    assert plan == CuePlan(TimeCue("likely", long_ago=True), None, None, ())
    assert unused_report(plan).as_dict()["period"] is None


def test_a_scope_newer_than_now_gives_long_ago_an_empty_period() -> None:
    assert period_of(TimeCue("sure", long_ago=True), NOW, NOW + DAY_MS) == Period(NOW, NOW)


# --- margins, L, the revision, recent-only ----------------------------------------------------


def test_margins() -> None:
    period = Period(1_000, 1_100)
    assert widen(period, "sure") == period
    assert widen(period, "likely") == Period(950, 1_150)
    assert widen(period, "vague") == Period(900, 1_200)
    assert widen(Period(0, 3), "likely") == Period(-1, 4)  # rounded down to the ms
    assert BOUND == {"sure": 3, "likely": 2, "vague": 1}


@pytest.mark.parametrize(
    ("confidence", "steps"),
    [
        ("sure", [("sure", 0, 3), ("likely", 1, 2)]),
        ("likely", [("likely", 1, 2), ("vague", 2, 1)]),
        ("vague", [("vague", 2, 1)]),
    ],
)
def test_the_revision_widens_by_one_step_and_takes_its_l(confidence, steps) -> None:
    period = Period(ms("2026-08-01"), ms("2026-09-01"))
    cue = TimeCue(confidence, after_ms=period.start_ms, before_ms=period.end_ms)
    plan = plan_cue(cue, NOW, OLDEST)
    assert plan.period == period and plan.ignored is None
    length = period.length_ms
    assert [(s.confidence, s.period, s.bound) for s in plan.stages] == [
        (
            step,
            Period(period.start_ms - half * length // 2, period.end_ms + half * length // 2),
            bound,
        )
        for step, half, bound in steps
    ]


def test_recent_only_cues_are_not_used() -> None:
    today = TimeCue("vague", after_ms=NOW - DAY_MS)
    plan = plan_cue(today, NOW, OLDEST)
    assert plan.ignored == RECENT_ONLY and plan.stages == ()
    assert plan.period == Period(NOW - DAY_MS, NOW)  # the cue's own period, before margins
    report = unused_report(plan).as_dict()
    assert report["ignored"] == "recent_only" and report["period"]["before"].endswith("Z")
    assert is_recent_only(Period(NOW + 10 * DAY_MS, NOW + 11 * DAY_MS), NOW)  # the future
    assert not is_recent_only(Period(NOW - DAY_MS - 1, NOW), NOW)
    # judged before margins: a vague cue for yesterday-and-today is still used
    assert plan_cue(TimeCue("vague", after_ms=NOW - DAY_MS - 1), NOW, OLDEST).stages
    # one day ago is centred 24 h back, so it starts 36 h back and is used
    assert plan_cue(TimeCue("sure", unit="days", value=1), NOW, OLDEST).ignored is None


def test_report_block() -> None:
    report = CueReport(
        "likely", Period(ms("2026-08-01"), ms("2026-09-01")), revised=True, moved=3, seats=2
    )
    assert report.as_dict() == {
        "policy": POLICY,
        "period": {"after": "2026-08-01T00:00:00.000Z", "before": "2026-09-01T00:00:00.000Z"},
        "confidence": "likely",
        "revised": True,
        "moved": 3,
        "seats": 2,
    }
    assert POLICY == "cued-v0.3"
    stopped = CueReport("vague", None, stopped="no_wider_period").as_dict()
    assert stopped["stopped"] == "no_wider_period" and "ignored" not in stopped


def test_a_reported_period_reads_back_as_the_same_period() -> None:
    period = Period(ms("2026-08-01T03:04:05.006"), ms("2026-08-09T10:00"))
    cue = parse_time_cue({**period.as_dict(), "confidence": "sure"})
    assert period_of(cue, NOW, OLDEST) == period


# --- the move ----------------------------------------------------------------------------------

ROWS = [f"r{i}" for i in range(10)]


@pytest.mark.parametrize("bound", [1, 2, 3])
def test_the_cue_first_row_rises_exactly_l_places(bound: int) -> None:
    moved = move(ROWS, {"r6": 1}, bound)
    assert moved.order.index("r6") == 6 - bound
    assert moved.lifted == 1 and moved.moved == bound + 1
    # from nearer the top it rises to the top and no further
    assert move(ROWS, {"r1": 1}, bound).order[0] == "r1"


def test_lower_cue_ranks_rise_less() -> None:
    # at cue rank 60 the bonus is 61/120 of L: about half
    assert move(ROWS, {"r6": 60}, 2).order.index("r6") == 5
    assert move(ROWS, {"r6": 60}, 3).order.index("r6") == 5
    assert move(ROWS, {"r6": 2}, 3).order.index("r6") == 4  # 61/62 of 3 passes two rows
    assert move(ROWS, {"r6": 200}, 1).order == tuple(ROWS)


def test_ties_go_to_the_found_row_then_keep_the_order() -> None:
    # L 3: r3 (cue rank 1) keys 0 and ties r0, r4 (rank 1) keys 1 and ties r1; found rows win
    moved = move(ROWS, {"r3": 1, "r4": 1}, 3)
    assert moved.order[:6] == ("r3", "r0", "r4", "r1", "r2", "r5")
    # L 2: x's bonus 2 x 61/122 = 1, y's 2 x 61/61 = 2: x, y and z all key 0. The found rows
    # go first, and between them the original order holds.
    assert move(["z", "x", "y"], {"x": 62, "y": 1}, 2).order == ("x", "y", "z")
    assert move(["z", "y", "x"], {"x": 62, "y": 1}, 2).order == ("y", "z", "x")


def test_nothing_found_moves_nothing() -> None:
    assert move(ROWS, {}, 3).order == tuple(ROWS)
    assert move(ROWS, {"r9": 1}, 0).moved == 0
    assert move(ROWS, {"elsewhere": 1}, 3).moved == 0
    with pytest.raises(ValueError):
        move(["a", "a"], {}, 1)
    with pytest.raises(ValueError):
        move(["a"], {"a": 0}, 1)


# --- seats and the cue arm's ranking -----------------------------------------------------------


def test_seats_take_the_cue_best_records_the_answer_lacks_and_the_gate_did_not_refuse() -> None:
    ranking = ["a", "x", "b", "y", "c", "d"]
    assert seats(ranking, {"a", "b"}, {"x"}, 3) == ["y", "c", "d"]
    assert seats(ranking, {"a", "b"}, {"x"}, 1) == ["y"]
    assert seats(ranking, set(ranking), set(), 3) == []
    assert seats(["y", "y", "z"], set(), set(), 2) == ["y", "z"]


def test_merge_fuses_the_halves_by_reciprocal_rank() -> None:
    merged = merge_cue_lists([["a", "b", "c"], ["c", "d"], [], ["e"]])
    # c: 1/63 + 1/61 first; a and e tie at 1/61 and break by id; so do b and d at 1/62
    assert merged == ["c", "a", "e", "b", "d"]
    assert cue_ranks(merged) == {"c": 1, "a": 2, "e": 3, "b": 4, "d": 5}


def test_merge_cuts_each_list_to_the_cue_depth() -> None:
    deep = [f"m{i:03}" for i in range(80)]
    merged = merge_cue_lists([deep, ["m070"]])
    assert CUE_DEPTH == 50 and len(merged) == 51
    assert merged[0] == "m000" and "m060" not in merged and "m070" in merged
    assert merge_cue_lists([["a", "a", "b"]], depth=1) == ["a"]


# --- §2.6 at the function level ----------------------------------------------------------------

ids = st.lists(st.integers(0, 40).map(lambda i: f"m{i}"), unique=True, max_size=25)


@st.composite
def cases(draw):
    returned = draw(ids)
    universe = sorted(set(returned) | set(draw(ids)))
    found = draw(st.lists(st.sampled_from(universe), unique=True) if universe else st.just([]))
    ranks = {row: draw(st.integers(1, 200)) for row in found}
    return returned, ranks, draw(st.sampled_from([1, 2, 3]))


@settings(max_examples=200, deadline=None)
@given(cases())
def test_the_move_is_a_bounded_permutation(case) -> None:
    returned, ranks, bound = case
    moved = move(returned, ranks, bound)
    assert sorted(moved.order) == sorted(returned)  # the counted rows are identical
    for q, row in enumerate(moved.order):
        p = returned.index(row)
        assert p - q <= bound  # no row moves up more than L places
        if row not in ranks:
            assert q >= p  # a row the cue did not find never rises
    assert moved.lifted <= moved.moved <= len(returned)


@settings(max_examples=200, deadline=None)
@given(ids, ids, ids, st.sampled_from([1, 2, 3]))
def test_seats_add_at_most_l_rows_never_returned_or_refused(ranking, returned, refused, bound):
    seated = seats(ranking, set(returned), set(refused), bound)
    assert len(seated) <= bound and len(set(seated)) == len(seated)
    assert not set(seated) & (set(returned) | set(refused))
    assert seated == [r for r in ranking if r in set(seated)]  # in cue-arm order
    eligible = [r for r in ranking if r not in returned and r not in refused]
    assert seated == eligible[:bound]  # the cue's best: none passed over


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["sure", "likely", "vague"]),
    st.integers(-(10**12), 10**12),
    st.integers(1, 10**11),
    st.integers(0, 10**12),
)
def test_stages_contain_the_period_and_widen(confidence, start, length, back) -> None:
    cue = TimeCue(confidence, after_ms=start, before_ms=start + length)
    now = start + length + DAY_MS + back
    plan = plan_cue(cue, now, None)
    assert plan.period == Period(start, start + length)
    wider = [plan.period, *(s.period for s in plan.stages)]
    for inner, outer in zip(wider, wider[1:], strict=False):
        assert outer.start_ms <= inner.start_ms and inner.end_ms <= outer.end_ms
    assert [s.bound for s in plan.stages] == sorted((s.bound for s in plan.stages), reverse=True)
    assert plan.stages[0].bound == BOUND[confidence] and len(plan.stages) <= 2
