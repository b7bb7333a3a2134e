"""The time cue wired into recall (seed 002 §2, policy cued-v0.3): the cue arm over the
recall's own scope and period, the bounded move and the seats after the count, recent-only
cues, the one revision and its time limit, the reply and the trace. Real store, real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.cli.render import print_hits
from chitta.config import RerankSettings, Settings, load_settings
from chitta.daemon.methods import METHODS, check_params
from chitta.embed.cross_encoder import LazyCrossEncoder
from chitta.errors import BadArgument, BadConfig, BadDate, InputError
from chitta.recall.confidence.gate import GateSettings, gate_reply
from chitta.recall.timecue.arm import vector_half
from chitta.recall.timecue.cue import BOUND, POLICY
from chitta.store.records import Scope
from chitta.transfer import import_jsonl
from chitta.wire import result_to_dict

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ms(text: str) -> int:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(milliseconds=1)


NOW = ms("2026-09-15T12:00:00")
QUERY = "kafka retention on the topics"
#: Eight memories on the query's subject, each on its own day (the 1st of a month).
KAFKA = [
    (f"01CUE0000000000000000000K{n}", f"Kafka retention on the {topic} topic is {days} days",
     f"2026-0{n + 1}-01")
    for n, (topic, days) in enumerate([("events", 7), ("audit", 30), ("billing", 14),
                                       ("metrics", 3), ("orders", 21), ("clicks", 2),
                                       ("payments", 90), ("logs", 5)])
]  # fmt: skip


def line(mid: str, content: str, when: str | None, **fields: Any) -> str:
    """A JSONL memory line in realm ops, stored on 2026-09-10 unless ``created_at`` says."""
    obj = {"type": "memory", "id": mid, "kind": "insight", "content": content, "realm": "ops",
           "created_at": "2026-09-10T00:00:00Z", "event_time": when, **fields}  # fmt: skip
    return json.dumps(obj)


def load(chitta: Chitta, lines: list[str]) -> None:
    report = import_jsonl(chitta, lines)
    assert not report.errors, report.errors
    chitta.clock = lambda: NOW


@pytest.fixture
def kafka(chitta: Chitta) -> Chitta:
    load(chitta, [line(mid, text, when) for mid, text, when in KAFKA])
    return chitta


def day(date: str, confidence: str = "sure") -> dict[str, str]:
    """A cue for one whole day."""
    return {"after": date, "before": date, "confidence": confidence}


def ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


def recall(chitta: Chitta, query: str = QUERY, **kw: Any):
    kw.setdefault("realm", "ops")
    return chitta.recall(query, record=False, **kw)


def when_of(mid: str) -> str:
    return next(when for i, _, when in KAFKA if i == mid)


# --- the move and the seats -------------------------------------------------------------------


def test_a_cue_lifts_an_in_period_row_exactly_l_places_and_keeps_the_rows(kafka) -> None:
    plain = ids(recall(kafka, limit=6))
    last = plain[-1]
    cued = recall(kafka, limit=6, time_cue=day(when_of(last)))  # sure: L = 3
    assert sorted(ids(cued)) == sorted(plain)  # the same rows, reordered
    assert ids(cued).index(last) == len(plain) - 1 - BOUND["sure"]
    reply = result_to_dict(cued)
    assert reply["time_cue"]["moved"] == 4 and reply["time_cue"]["seats"] == 0
    reasons = {h["id"]: h["match_reason"] for h in reply["hits"]}
    assert reasons[last] == {"cue_rank": 1}
    assert all(reasons[i] == {} for i in plain if i != last)
    vague = recall(kafka, limit=6, time_cue=day(when_of(last), "vague"))  # L = 1, wider period
    assert all(plain.index(i) - ids(vague).index(i) <= BOUND["vague"] for i in plain)


def test_a_seat_brings_back_an_in_period_record_the_count_cut(kafka) -> None:
    plain = recall(kafka, limit=2)
    cut = next(i for i in ids(recall(kafka, limit=8))[2:] if i not in ids(plain))
    was = next(d.outcome for d in plain.decisions if d.id == cut)  # cut, or inhibited
    cued = recall(kafka, limit=2, time_cue=day(when_of(cut)))
    assert ids(cued) == [*ids(plain), cut]
    reply = result_to_dict(cued)
    assert reply["hits"][2]["match_reason"] == {"signal": "cue", "admission": "reservation",
                                                "cue_rank": 1}  # fmt: skip
    assert reply["hits"][2]["reason"] == "cue" and reply["hits"][2]["rank"] == 3
    assert reply["time_cue"]["seats"] == 1
    assert next(d for d in cued.decisions if d.id == cut).outcome == "seated"
    assert cued.dropped.get(was, 0) == plain.dropped[was] - 1  # returned, not dropped


def test_a_seat_may_hold_a_record_no_lane_reached(chitta: Chitta) -> None:
    fillers = [line(f"01CUE00000000000000000F{n:03d}", f"Kafka retention note {n}: keep topic "
                    f"{n} for {n % 9 + 1} days", "2025-01-01") for n in range(45)]  # fmt: skip
    cat = "01CUE0000000000000000000CAT"
    load(chitta, [*fillers, line(cat, "The cat slept on the warm windowsill", "2026-05-05")])
    plain = recall(chitta, limit=3, trace=True)
    assert cat not in {r["ref"] for rows in plain.trace["arms"].values() for r in rows}
    cued = recall(chitta, limit=3, trace=True, time_cue=day("2026-05-05"))
    assert ids(cued) == [*ids(plain), cat]
    assert cued.trace["reservation"] == [{"ref": cat, "signal": "cue", "cue_rank": 1,
                                          "was": None}]  # fmt: skip
    assert cat in cued.trace["order"]["returned"]
    assert cat in {d["ref"] for d in cued.trace["gate"]["decisions"]}


def test_an_episode_started_in_the_period_puts_its_memories_in_it(chitta: Chitta) -> None:
    episode = {"type": "episode", "id": "01CUEEPISODE00000000000001", "realm": "ops",
               "title": "standup", "started_at": "2025-12-24T09:00:00Z",
               "created_at": "2025-12-24T09:00:00Z"}  # fmt: skip
    told = "01CUE0000000000000000000EP"
    load(chitta, [json.dumps(episode),
                  *[line(mid, text, when) for mid, text, when in KAFKA[:4]],
                  line(told, "Kafka retention for the search topic went to 60 days", "2026-08-30",
                       episode_id=episode["id"])])  # fmt: skip
    result = recall(chitta, limit=1, trace=True, time_cue=day("2025-12-24"))
    assert [r["ref"] for r in result.trace["arms"]["cue"]] == [told]
    # The episode's start is also the scope's oldest time (long_ago, open `after`).
    assert chitta.store.scope_oldest(Scope("ops")) == ms("2025-12-24T09:00")
    assert chitta.store.scope_oldest(Scope("ops", agent_id="nobody")) is None


def test_isolation_is_never_widened(chitta: Chitta) -> None:
    others = {
        "01CUE00000000000000000REALM": {"realm": "dev"},
        "01CUE00000000000000000AGENT": {"agent_id": "a2"},
        "01CUE0000000000000000000CHAN": {"agent_id": "a1", "channel": "c2"},
    }
    mine = "01CUE000000000000000000MINE"
    lines = [line(mid, f"Kafka retention on the shared topic is {n} days", "2026-06-06", **f)
             for n, (mid, f) in enumerate(others.items(), 1)]  # fmt: skip
    lines.append(line(mine, "Kafka retention on the agent topic is 8 days", "2026-06-06",
                      agent_id="a1", channel="c1"))  # fmt: skip
    load(chitta, lines)
    for conf in ("sure", "likely", "vague"):
        cued = recall(chitta, agent_id="a1", channel="c1", limit=5, trace=True,
                      time_cue=day("2026-06-06", conf))  # fmt: skip
        assert ids(cued) == [mine]
        assert [r["ref"] for r in cued.trace["arms"]["cue"]] == [mine]
    wide = recall(chitta, agent_id="a1", limit=5, time_cue=day("2026-06-06"))
    assert set(ids(wide)) == {mine, "01CUE0000000000000000000CHAN"}


def test_forgotten_and_superseded_records_are_never_seated(chitta: Chitta) -> None:
    gone, old, new = ("01CUE00000000000000000GONE", "01CUE000000000000000000OLD",
                      "01CUE000000000000000000NEW")  # fmt: skip
    # Unrelated live memories too: gate.bm25_ceiling fails (log of a negative) when a term's
    # FTS count, which counts forgotten rows, exceeds the live total; not the cue's doing.
    others = [line(f"01CUE000000000000000000CAT{n}", f"The cat number {n} slept all day",
                   "2025-01-01") for n in range(3)]  # fmt: skip
    load(chitta, [
        *others,
        *[line(mid, text, when) for mid, text, when in KAFKA[:3]],
        line(gone, "Kafka retention on the trash topic is 1 day", "2026-07-07",
             deleted_at="2026-09-01T00:00:00Z"),
        line(old, "Kafka retention on the legacy topic is 4 days", "2026-07-07",
             superseded_by=new),
        line(new, "Kafka retention on the legacy topic is now 6 days", "2025-01-01",
             supersedes=old),
    ])  # fmt: skip
    cued = recall(chitta, limit=1, time_cue=day("2026-07-07"))
    assert gone not in ids(cued) and old not in ids(cued)
    assert result_to_dict(cued)["time_cue"]["seats"] == 0
    kept = recall(chitta, limit=1, include_superseded=True, time_cue=day("2026-07-07"))
    assert old in ids(kept) and gone not in ids(kept)


def test_the_move_comes_after_the_reranker(kafka) -> None:
    class Scorer:  # plays the cross-encoder at its model seam: "audit" first, then the rest
        name = "stand-in"

        def score(self, query: str, documents: list[str]) -> np.ndarray:
            return np.array([[3.0] if "audit" in d else [-float(len(d))] for d in documents],
                            np.float32)  # fmt: skip

    kafka.reranker = LazyCrossEncoder(RerankSettings(onnx_dir=Path("/x")), load=lambda s: Scorer())
    plain = recall(kafka, limit=4)
    assert plain.rerank.applied and "audit" in plain.hits[0].memory.content
    last = ids(plain)[-1]  # sure: L = 3, so the reranker's last of four becomes first
    cued = recall(kafka, limit=4, time_cue=day(when_of(last)))
    assert ids(cued) == [last, *ids(plain)[:3]]


# --- not used, revised, stopped ---------------------------------------------------------------


def test_a_cue_for_today_is_not_used(kafka) -> None:
    today = {"after": "2026-09-15", "confidence": "sure"}
    plain, cued = recall(kafka, limit=3), recall(kafka, limit=3, time_cue=today, trace=True)
    assert ids(cued) == ids(plain)
    reply, base = result_to_dict(cued), result_to_dict(plain)
    block = reply.pop("time_cue")
    assert block["ignored"] == "recent_only" and block["seats"] == 0 and block["moved"] == 0
    assert block["period"] == {"after": "2026-09-15T00:00:00.000Z",
                               "before": "2026-09-15T12:00:00.000Z"}  # fmt: skip
    for r in (reply, base):
        r.pop("timing_ms")
        r.pop("trace", None)
    assert reply == base  # no match_reason either: the rows are those of the plain recall
    assert cued.trace["cue_ignored"]["reason"] == "recent_only"
    assert "cue" not in cued.trace["arms"] and cued.trace["policy"]["process"] == POLICY


def test_a_cue_in_an_empty_scope_names_no_period(kafka) -> None:
    cue = {"ago": "long_ago", "confidence": "vague"}
    cued = result_to_dict(recall(kafka, realm="empty", time_cue=cue))
    assert cued["time_cue"]["period"] is None and cued["hits"] == []


def test_an_empty_period_is_widened_once(kafka) -> None:
    # 2 to 4 May (to 5 May 00:00) holds nothing; the likely margin, 1.5 days a side, reaches
    # back to 30 April 12:00, and 1 May (KAFKA[4]) lies in it.
    cue = {"after": "2026-05-02", "before": "2026-05-04", "confidence": "sure"}
    cued = recall(kafka, limit=2, trace=True, time_cue=cue)
    block = result_to_dict(cued)["time_cue"]
    assert block["revised"] is True and block["confidence"] == "likely"
    assert block["period"] == {"after": "2026-04-30T12:00:00.000Z",
                               "before": "2026-05-06T12:00:00.000Z"}  # fmt: skip
    stages = cued.trace["stages"]
    assert [s["stage"] for s in stages] == ["single-pass", "cue", "cue-revision"]
    assert stages[1]["found"] == 0 and stages[1]["next"] == "cue-revision" and stages[1]["why"]
    assert stages[2]["searched"]["bound"] == BOUND["likely"] and stages[2]["found"] == 1
    assert cued.trace["suspected"] == [{"code": "CANDIDATE_MISS", "stage": "cue",
                                        "symptom": "the time cue's period held no candidate",
                                        "action": "widened"}]  # fmt: skip
    assert KAFKA[4][0] in ids(cued)


def test_a_vague_cue_whose_period_holds_nothing_stops(kafka) -> None:
    cue = {"after": "2024-01-01", "before": "2024-01-02", "confidence": "vague"}
    plain, cued = recall(kafka, limit=3), recall(kafka, limit=3, trace=True, time_cue=cue)
    assert ids(cued) == ids(plain)
    block = result_to_dict(cued)["time_cue"]
    assert block["stopped"] == "no_wider_period" and block["revised"] is False
    assert [s["code"] for s in cued.trace["suspected"]] == ["CANDIDATE_MISS"]
    assert cued.trace["suspected"][0]["action"] == "stopped: no_wider_period"
    assert cued.trace["stages"][-1]["stopped"] == "no_wider_period"


def test_at_the_time_limit_the_revision_does_not_run(kafka) -> None:
    kafka.switches = replace(kafka.switches, cue_time_limit_ms=0)
    cue = {"after": "2026-05-02", "before": "2026-05-04", "confidence": "sure"}
    cued = recall(kafka, limit=2, trace=True, time_cue=cue)
    block = result_to_dict(cued)["time_cue"]
    assert block["revised"] is False and block["stopped"] == "time_limit"
    assert block["confidence"] == "sure" and block["seats"] == 0
    assert cued.trace["suspected"][-1]["action"] == "stopped: time_limit"
    assert [s["stage"] for s in cued.trace["stages"]] == ["single-pass", "cue"]


def test_the_time_limit_is_read_from_the_environment() -> None:
    assert load_settings({}).recall.cue_time_limit_ms == 1000
    env = {"CHITTA_RECALL_CUE_TIME_LIMIT_MS": "250"}
    assert load_settings(env).recall.cue_time_limit_ms == 250
    for bad in ("soon", "-1", "9999999"):
        with pytest.raises(BadConfig, match="CHITTA_RECALL_CUE_TIME_LIMIT_MS"):
            load_settings({"CHITTA_RECALL_CUE_TIME_LIMIT_MS": bad})


def test_the_keyword_strategy_searches_the_period_by_keyword_only(kafka) -> None:
    cued = recall(kafka, limit=2, strategy="keyword", trace=True, time_cue=day("2026-03-01"))
    stage = cued.trace["stages"][1]
    assert stage["vector"] == 0 and stage["keyword"] == 1


# --- the reply and the trace ------------------------------------------------------------------


def test_the_trace_of_a_cued_recall(kafka) -> None:
    given = {"after": "2026-02-01", "before": "2026-03-31", "confidence": "likely"}
    cued = recall(kafka, limit=2, trace=True, time_cue=given)
    trace = cued.trace
    assert trace["policy"]["process"] == "cued-v0.3"
    assert trace["request"]["time_cue"] == given
    assert trace["time_cue"] == result_to_dict(cued)["time_cue"]
    cue_arm = trace["arms"]["cue"]
    assert [r["rank"] for r in cue_arm] == list(range(1, len(cue_arm) + 1))
    in_period = {mid for mid, _, when in KAFKA if "2026-01-01" <= when <= "2026-04-30"}
    assert {r["ref"] for r in cue_arm} <= in_period  # likely: Jan 1 12:00 to Apr 30 12:00
    seated = [r["ref"] for r in trace["reservation"]]
    assert seated == ids(cued)[2:] and 0 < len(seated) <= BOUND["likely"]
    assert trace["order"]["returned"] == ids(cued)
    assert set(seated) <= set(trace["order"]["cut"])
    assert trace["stages"][0]["next"] == "cue" and trace["stages"][1]["next"] is None
    assert trace["suspected"] == [] and "cue_ignored" not in trace
    text = json.dumps(trace).lower()
    assert "retention" not in text and "kafka" not in text  # no stored text, no query


def test_without_a_cue_nothing_is_added(kafka) -> None:
    reply = result_to_dict(recall(kafka, limit=3, trace=True))
    assert "time_cue" not in reply and all("match_reason" not in h for h in reply["hits"])
    assert reply["trace"]["policy"]["process"] == "single-pass-v0"
    assert "cue" not in reply["trace"]["arms"] and reply["trace"]["reservation"] == []


# --- bad cues are refused, naming the part ----------------------------------------------------


BAD = [
    ({"after": "2026-01-01"}, "time_cue.confidence"),
    ({"ago": {"unit": "years", "value": 2}, "confidence": "sure"}, "time_cue.ago.unit"),
    ({"after": "2026-13-01", "confidence": "sure"}, "time_cue.after"),
    ({"when": "yesterday", "confidence": "sure"}, "time_cue.when"),
]


@pytest.mark.parametrize(("cue", "part"), BAD)
def test_a_bad_cue_is_refused_over_rpc_naming_the_part(kafka, cue, part) -> None:
    method = METHODS["recall"]
    params = {"query": QUERY, "realm": "ops", "time_cue": cue}
    check_params(method, params)
    with pytest.raises(InputError, match=part.replace(".", r"\.")) as caught:
        method.call(kafka, params)
    assert caught.value.code in ("bad_argument", "bad_date")


def test_the_rpc_method_takes_a_cue_object(kafka) -> None:
    method = METHODS["recall"]
    with pytest.raises(BadArgument, match="time_cue must be an object, got text"):
        check_params(method, {"query": QUERY, "time_cue": "last week"})
    reply = method.call(kafka, {"query": QUERY, "realm": "ops", "limit": 2,
                               "time_cue": day("2026-03-01")})  # fmt: skip
    assert reply["ok"] and reply["time_cue"]["policy"] == POLICY


def test_the_python_api_refuses_a_bad_cue_before_searching(kafka) -> None:
    with pytest.raises(BadDate, match="time_cue.after"):
        kafka.recall(QUERY, time_cue={"after": "2026-05-01", "before": "2026-04-01",
                                      "confidence": "sure"})  # fmt: skip


def test_the_command_line_passes_a_cue_and_names_a_bad_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(tmp_path / "home")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                              text=True, env=env, timeout=120)  # fmt: skip

    assert run("remember", "Kafka retention on the events topic is seven days", "--realm",
               "ops", "--event-time", "2026-03-01").returncode == 0  # fmt: skip
    cue = json.dumps({"after": "2026-03-01", "before": "2026-03-01", "confidence": "sure"})
    done = run("recall", "kafka retention", "--realm", "ops", "--time-cue", cue, "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["time_cue"]["policy"] == POLICY and reply["hits"][0]["match_reason"]
    bad = run("recall", "kafka", "--realm", "ops", "--time-cue", '{"after": "2026-03-01"}',
              "--json")  # fmt: skip
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["message"].startswith("time_cue.confidence is required")
    broken = run("recall", "kafka", "--time-cue", "{after: 2026}")
    assert broken.returncode == 2 and "--time-cue is not JSON" in broken.stderr


def test_the_gateway_judges_the_counted_rows_as_without_the_cue(kafka) -> None:
    cut = ids(recall(kafka, limit=8))[-1]
    plain = result_to_dict(recall(kafka, limit=2))
    cued = result_to_dict(recall(kafka, limit=2, time_cue=day(when_of(cut))))
    assert len(cued["hits"]) == 3
    for limit in (2, 3):  # at 3 the seat must not make the page look full
        gated = [gate_reply({"ok": True, **r}, realm="ops", default_realm="default",
                            limit=limit, strategy="hybrid", settings=GateSettings())
                 for r in (plain, cued)]  # fmt: skip
        assert gated[0]["gate"]["relaxed"] == gated[1]["gate"]["relaxed"] == (limit == 3)
        assert [h["id"] for h in gated[1]["hits"]][:2] == [h["id"] for h in gated[0]["hits"]]


def test_the_human_output_says_what_the_cue_did(kafka, capsys) -> None:
    cut = ids(recall(kafka, limit=8))[-1]
    print_hits(result_to_dict(recall(kafka, limit=2, time_cue=day(when_of(cut)))))
    shown = capsys.readouterr().out
    assert "seat cue#1" in shown and "time cue sure (cued-v0.3) searched" in shown
    assert "0 moved, 1 seated" in shown


# --- the cue arm's two ways of ranking the period agree ---------------------------------------


def test_the_vector_half_ranks_alike_from_the_scope_or_the_period(kafka) -> None:
    vector = kafka.embedder.embed([QUERY]).vectors[0]
    scope, store = Scope("ops"), kafka.store
    start, end = ms("2026-01-01"), ms("2026-07-02")  # 7 of the 8
    listed = store.period_ids(scope, start, end, include_superseded=False)
    assert len(listed) == 7 and store.period_ids(scope, start, end, include_superseded=False,
                                                 limit=6) is None  # fmt: skip
    direct = store.vector_search_among(vector, listed, 50)

    def half(**kw: int) -> list[str]:
        found = vector_half(store, vector, scope, start, end, include_superseded=False, **kw)
        return [i for i, _ in found]

    assert half() == [i for i, _ in direct]  # listed and scored directly
    assert half(max_listed=3) == [i for i, _ in direct]  # the scope's 2000 nearest: all 8
    assert half(max_listed=3, depth=2, scope_candidates=4) == [i for i, _ in direct[:2]]
    assert half(max_listed=3, depth=7, scope_candidates=4) == [i for i, _ in direct]


# --- properties over random stores, queries and cues (§2.6) -----------------------------------

WORDS = ["kafka", "retention", "postgres", "deploy", "billing", "cache", "latency", "audit",
         "backup", "schema", "queue", "token"]  # fmt: skip
START, SPAN_DAYS = ms("2025-01-01"), 600


@dataclass(frozen=True)
class World:
    chitta: Chitta
    scope_of: dict[str, tuple[str, str]]  # id -> (realm, agent)
    refused: frozenset[str]  # forgotten or superseded


#: The random stores the properties draw from: (seed, memories). Built once each: the
#: properties only read them, and embedding a store per example would cost minutes.
WORLDS = ((7, 36), (11, 24), (23, 60))


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[list[World]]:
    """:data:`WORLDS` as stores; each holds memories over 600 days, in two realms and two
    agents, some in episodes, some forgotten or superseded, all drawn from its seed."""
    opened = [Chitta.open(Settings(home=tmp_path_factory.mktemp(f"cue-world-{seed}")),
                          embedder=embedder) for seed, _ in WORLDS]  # fmt: skip
    try:
        yield [_world(chitta, seed, size) for chitta, (seed, size) in zip(opened, WORLDS,
                                                                         strict=True)]  # fmt: skip
    finally:
        for chitta in opened:
            chitta.close()


def _world(chitta: Chitta, seed: int, size: int) -> World:
    rng = np.random.default_rng(seed)
    lines, scope_of, refused = [], {}, set()
    for e in range(3):
        started = _iso(START + int(rng.integers(SPAN_DAYS)) * 86_400_000)
        lines.append(json.dumps({"type": "episode", "id": f"01CUEWORLDEP{e:014d}",
                                 "realm": "ops", "title": f"session {e}",
                                 "started_at": started}))  # fmt: skip
    for n in range(size):
        mid = f"01CUEWORLD{n:016d}"
        realm, agent = ("dev", "") if n % 6 == 5 else ("ops", "a1" if n % 2 else "a2")
        words = rng.choice(WORDS, size=3, replace=False)
        created = START + int(rng.integers(SPAN_DAYS)) * 86_400_000
        when = None if n % 4 == 0 else START + int(rng.integers(SPAN_DAYS)) * 86_400_000
        fields: dict[str, Any] = {"realm": realm, "agent_id": agent, "created_at": _iso(created)}
        if n % 7 == 3 and realm == "ops":
            fields["episode_id"] = f"01CUEWORLDEP{n % 3:014d}"
        if n % 9 == 4:
            fields["deleted_at"] = _iso(created)
            refused.add(mid)
        if n % 11 == 2:
            fields["superseded_by"] = "01CUEWORLD0000000000000001"
            refused.add(mid)
        text = f"Note {n}: the {words[0]} {words[1]} of the {words[2]} service changed"
        lines.append(line(mid, text, _iso(when) if when else None, **fields))
        scope_of[mid] = (realm, agent)
    load(chitta, lines)
    return World(chitta, scope_of, frozenset(refused))


def _iso(at: int) -> str:
    return (EPOCH + timedelta(milliseconds=at)).isoformat().replace("+00:00", "Z")


def _date(offset_days: int) -> str:
    return (EPOCH + timedelta(milliseconds=START) + timedelta(days=offset_days)).date().isoformat()


confidences = st.sampled_from(["sure", "likely", "vague"])
absolute = st.builds(
    lambda a, length, conf, open_end: {
        **({} if open_end == "after" else {"after": _date(a)}),
        **({} if open_end == "before" else {"before": _date(a + length)}),
        "confidence": conf,
    },
    st.integers(-60, SPAN_DAYS + 60), st.integers(0, 120), confidences,
    st.sampled_from([None, "after", "before"]),
)  # fmt: skip
relative = st.builds(
    lambda unit, value, conf: {"ago": {"unit": unit, "value": value}, "confidence": conf},
    st.sampled_from(["days", "weeks", "months"]), st.integers(1, 30), confidences,
)  # fmt: skip
long_ago = st.builds(lambda conf: {"ago": "long_ago", "confidence": conf}, confidences)
recent = st.builds(lambda conf: {"after": "2026-09-15", "confidence": conf}, confidences)
cues = st.one_of(absolute, relative, long_ago, recent)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
scopes = st.sampled_from([("ops", None), ("ops", "a1"), ("dev", None)])
PROPERTY = settings(max_examples=40, deadline=None)


@PROPERTY
@given(which=st.integers(0, len(WORLDS) - 1), query=queries, scope=scopes,
       limit=st.integers(1, 12))  # fmt: skip
def test_without_a_cue_nothing_changes(worlds: list[World], which, query, scope, limit) -> None:
    world = worlds[which]
    realm, agent = scope
    c = world.chitta
    a = c.recall(query, realm=realm, agent_id=agent, limit=limit, record=False)
    b = c.recall(query, realm=realm, agent_id=agent, limit=limit, record=False, time_cue=None)
    assert b.cue is None
    da, db = result_to_dict(a), result_to_dict(b)
    da.pop("timing_ms"), db.pop("timing_ms")
    assert json.dumps(da, sort_keys=True) == json.dumps(db, sort_keys=True)


@PROPERTY
@given(which=st.integers(0, len(WORLDS) - 1), query=queries, scope=scopes,
       limit=st.integers(1, 12), cue=cues, superseded=st.booleans(),
       cross_realm=st.booleans())  # fmt: skip
def test_a_cue_reorders_within_l_and_adds_at_most_l_rows_in_scope(
    worlds: list[World], which, query, scope, limit, cue, superseded, cross_realm
) -> None:
    world = worlds[which]
    realm, agent = scope
    c = world.chitta
    args = {"realm": realm, "agent_id": agent, "limit": limit, "record": False,
            "include_superseded": superseded, "cross_realm": cross_realm}  # fmt: skip
    plain = ids(c.recall(query, **args))
    result = c.recall(query, time_cue=cue, **args)
    cued, bound = ids(result), BOUND[cue["confidence"]]
    counted, added = cued[: len(plain)], cued[len(plain) :]
    assert sorted(counted) == sorted(plain)  # the rows the count returns are the same rows
    assert all(plain.index(i) - counted.index(i) <= bound for i in plain)  # up at most L
    ranks = result.cue.ranks
    assert all(counted.index(i) >= plain.index(i) for i in plain if i not in ranks)
    assert len(added) <= result.cue.bound <= bound and len(set(cued)) == len(cued)
    for i in added:
        assert world.scope_of[i][0] == realm and agent in (None, world.scope_of[i][1])
        assert i not in world.refused or (superseded and world.chitta.get(i).deleted_at is None)
    block = result_to_dict(result)["time_cue"]
    assert block["seats"] == len(added) and block["policy"] == POLICY
    if block.get("ignored"):
        assert cued == plain
