"""The ``when`` lane (recall/lanes/when.py): the memories of the time the question names in
its own words, fused with the other lanes. Real store, real model, both backends."""

from __future__ import annotations

import json

import pytest

from chitta.api import Chitta
from chitta.errors import BadArgument
from chitta.transfer import import_jsonl
from chitta.validate import parse_time

NOW = parse_time("2026-09-15T12:00:00")
#: Kafka retention notes, one on the 1st of each month from January to August 2026.
TOPICS = ["events", "audit", "billing", "metrics", "orders", "clicks", "payments", "logs"]
NOTES = {
    topic: (f"01WHEN00000000000000000{n:03d}", f"Kafka retention on the {topic} topic is "
            f"{n + 3} days", f"2026-0{n + 1}-01")
    for n, topic in enumerate(TOPICS)
}  # fmt: skip


def mid(topic: str) -> str:
    return NOTES[topic][0]


@pytest.fixture
def kafka(chitta: Chitta) -> Chitta:
    lines = [json.dumps({"type": "memory", "id": i, "kind": "insight", "content": text,
                         "realm": "ops", "event_time": when,
                         "created_at": "2026-09-10T00:00:00Z"})
             for i, text, when in NOTES.values()]  # fmt: skip
    report = import_jsonl(chitta, lines)
    assert not report.errors, report.errors
    chitta.clock = lambda: NOW
    return chitta


def found_by_when(result) -> set[str]:
    return {h.memory.id for h in result.hits if "when" in h.lanes}


def recall(chitta: Chitta, query: str, **kw):
    return chitta.recall(query, realm="ops", record=False, limit=8, **kw)


def test_a_named_month_brings_that_months_memories_first(kafka: Chitta) -> None:
    plain = recall(kafka, "kafka retention on the topics")
    assert "when" in plain.lanes_run and not found_by_when(plain)  # no time named: silent
    dated = recall(kafka, "kafka retention on the topics in March 2026")
    # March, with half a month's margin each side: the 1 March and 1 April notes.
    in_period = {mid("billing"), mid("metrics")}
    assert found_by_when(dated) == in_period
    assert {h.memory.id for h in dated.hits[:2]} == in_period
    assert "when" in dated.hits[0].reason


def test_a_month_alone_is_the_latest_that_holds_memories(kafka: Chitta) -> None:
    # "in June" on 15 September 2026: June 2026 (1 June and, within the margin, 1 July).
    assert found_by_when(recall(kafka, "kafka retention in June")) == {mid("clicks"),
                                                                       mid("payments")}  # fmt: skip
    # Nothing stored in March 2020, nor any September: the lane finds nothing.
    assert not found_by_when(recall(kafka, "kafka retention in March 2020"))
    assert not found_by_when(recall(kafka, "kafka retention in September"))


def test_a_day_that_holds_nothing_is_searched_a_step_wider(kafka: Chitta) -> None:
    # 2 March, likely: half a day each side holds no note; vague, a day each side, reaches
    # the note of 1 March. 10 March holds nothing either way.
    assert found_by_when(recall(kafka, "kafka retention set on 2 March 2026")) == {mid("billing")}
    assert not found_by_when(recall(kafka, "kafka retention set on 10 March 2026"))


def test_relative_words_count_back_from_the_recalls_now(kafka: Chitta) -> None:
    # Asked on 20 April 2026, "two weeks ago" is the week around 6 April (with its margin,
    # 1 April's note); asked today, it names September, which holds nothing.
    asked = parse_time("2026-04-20T09:00:00")
    then = recall(kafka, "kafka retention we set two weeks ago", now=asked)
    assert found_by_when(then) == {mid("metrics")}
    assert then.hits[0].memory.id == mid("metrics")
    assert not found_by_when(recall(kafka, "kafka retention we set two weeks ago"))


def test_the_lane_can_be_ablated_and_other_presets_leave_it_out(kafka: Chitta) -> None:
    query = "kafka retention on the topics in March 2026"
    assert "when" not in recall(kafka, query, ablate=["when"]).lanes_run
    assert "when" not in recall(kafka, query, strategy="semantic").lanes_run
    with pytest.raises(BadArgument, match="unknown lane 'whenever'"):
        recall(kafka, query, ablate=["whenever"])


def test_an_empty_period_skips_the_keyword_half(kafka: Chitta, monkeypatch) -> None:
    periods = []
    search = kafka.store.period_keyword_search

    def recorded(terms, scope, start, end, *args, **kw):  # type: ignore[no-untyped-def]
        periods.append((start, end))
        return search(terms, scope, start, end, *args, **kw)

    monkeypatch.setattr(kafka.store, "period_keyword_search", recorded)
    recall(kafka, "kafka retention set on 10 March 2026")  # nothing that day, nor a step wider
    assert periods == []
    recall(kafka, "kafka retention set on 1 March 2026")  # the day of a note: searched
    assert len(periods) == 1
