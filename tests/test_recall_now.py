"""Recall asked at a given "now" (issue 19): the time a relative time cue counts back from,
while the access history keeps the real clock. Real store, real model."""

from __future__ import annotations

import json

import pytest

from chitta.api import Chitta
from chitta.errors import BadDate
from chitta.ops import OPERATIONS
from chitta.transfer import import_jsonl
from chitta.validate import parse_time
from chitta.wire import result_to_dict

#: A question's date, as LongMemEval gives one ("2023/05/30 (Tue) 03:16"), in ISO 8601.
ASKED = "2023-05-30T03:16:00"
CLOCK = parse_time("2026-09-15T12:00:00")
#: Three trips, one a week before ASKED, the others months before it.
TRIPS = [
    ("01NOW00000000000000000000A", "We drove to the coast for the weekend trip", "2023-05-23"),
    ("01NOW00000000000000000000B", "We drove to the mountains for the weekend trip", "2023-02-01"),
    ("01NOW00000000000000000000C", "We drove to the lakes for the weekend trip", "2022-11-10"),
]
LAST_WEEK = {"ago": {"unit": "weeks", "value": 1}, "confidence": "sure"}


@pytest.fixture
def trips(chitta: Chitta) -> Chitta:
    lines = [json.dumps({"type": "memory", "id": mid, "kind": "episode", "content": text,
                         "realm": "life", "event_time": when,
                         "created_at": "2023-06-01T00:00:00Z"})
             for mid, text, when in TRIPS]  # fmt: skip
    report = import_jsonl(chitta, lines)
    assert not report.errors, report.errors
    chitta.clock = lambda: CLOCK
    return chitta


def test_a_relative_cue_counts_back_from_the_given_now(trips: Chitta) -> None:
    asked = trips.recall("where did we drive for the weekend trip", realm="life", limit=3,
                         time_cue=LAST_WEEK, now=ASKED, record=False)  # fmt: skip
    block = result_to_dict(asked)["time_cue"]
    # One week long, centred a week before 30 May 03:16: 19 May 15:16 to 26 May 15:16.
    assert block["period"] == {"after": "2023-05-19T15:16:00.000Z",
                               "before": "2023-05-26T15:16:00.000Z"}  # fmt: skip
    assert asked.hits[0].memory.id == TRIPS[0][0]
    # The same cue at the real clock points at a week of 2026 that holds nothing.
    clock = trips.recall("where did we drive for the weekend trip", realm="life", limit=3,
                         time_cue=LAST_WEEK, record=False)  # fmt: skip
    assert result_to_dict(clock)["time_cue"]["period"]["before"].startswith("2026-09")


def test_now_takes_epoch_milliseconds_too(trips: Chitta) -> None:
    at_ms = trips.recall("weekend trip", realm="life", time_cue=LAST_WEEK, record=False,
                         now=parse_time(ASKED))  # fmt: skip
    at_iso = trips.recall("weekend trip", realm="life", time_cue=LAST_WEEK, record=False,
                          now=ASKED)  # fmt: skip
    assert result_to_dict(at_ms)["time_cue"] == result_to_dict(at_iso)["time_cue"]


def test_the_access_history_keeps_the_real_clock(trips: Chitta) -> None:
    result = trips.recall("coast weekend trip", realm="life", limit=1, now=ASKED)
    history = trips.store.access_history([result.hits[0].memory.id])
    times = history[result.hits[0].memory.id].times
    assert times and max(times) == CLOCK


@pytest.mark.parametrize("bad", ["last tuesday", "2023/05/30 (Tue) 03:16", True, float("nan")])
def test_a_bad_now_is_refused_naming_it(trips: Chitta, bad: object) -> None:
    with pytest.raises(BadDate, match="now"):
        trips.recall("weekend trip", realm="life", now=bad)


def test_the_operation_offers_now_to_the_daemon_and_the_cli_not_to_mcp() -> None:
    """An agent asks at the present; ``now`` is for replays and benchmarks, and the MCP tool
    list has a budget (tests/e2e: what Claude Code is sent)."""
    recall = OPERATIONS["recall"]
    assert "now" not in recall.input_schema()["properties"]  # the MCP tool's schema
    [param] = [p for p in recall.params if p.name == "now"]
    assert param.cli and not param.mcp and param.option == "--now"
