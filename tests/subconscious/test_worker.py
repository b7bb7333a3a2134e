"""The subconscious under a fake clock: what it sweeps, when, at what pace, and what it
records; a step that fails; a restart that remembers when the last sweep ended."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest
from tests.conftest import memory

from chitta import hygiene
from chitta.api import MS_PER_DAY, Chitta
from chitta.store.confidence import Confidence
from chitta.store.kinds import DECAY_RATE, Kind
from chitta.subconscious.schedule import UpkeepSettings, next_due, rest_after
from chitta.subconscious.worker import META_PREFIX, Subconscious, last_sweeps

T0 = 1_800_000_000_000
PORT = "The staging database listens on port 5432"
ONLY_DECAY = UpkeepSettings(start_s=0, hygiene_s=0, indexes_s=0, decay_batch=2)
ONLY_HYGIENE = UpkeepSettings(start_s=0, decay_s=0, indexes_s=0, hygiene_batch=2)
ONLY_INDEXES = UpkeepSettings(start_s=0, decay_s=0, hygiene_s=0, themes_batch=3)


class Clock:
    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def put(chitta: Chitta, text: str, kind: Kind = Kind.INSIGHT, **fields: object) -> str:
    """Store ``text`` past the write-time gate (as an import does), created at T0, with its
    kind's decay rate."""
    m = memory(text, realm="d", kind=kind, confidence=Confidence.initial(DECAY_RATE[kind]),
               created_at=T0, updated_at=T0, decayed_at=T0, **fields)  # fmt: skip
    chitta.store.insert([(m, chitta.embedder.embed([text]).vectors[0])])
    return m.id


def sweep(worker: Subconscious, name: str) -> int:
    """Tick until ``name``'s sweep under way ends (or none was due); the ticks it took."""
    ticks = 0
    before = worker.status()["tasks"][name]["last"]
    while ticks < 100:
        worker.tick()
        ticks += 1
        task = worker.status()["tasks"][name]
        if task["under_way"] is None and task["last"] != before:
            return ticks
    raise AssertionError(f"the {name} sweep did not end")


def test_the_pace_rule_and_the_timing_rule() -> None:
    assert rest_after(0.1, 0.1) == pytest.approx(0.9)  # 10 % of the time at work
    assert rest_after(0.1, 0.5) == pytest.approx(0.1)
    assert rest_after(0.0, 0.1) == 0.0
    assert next_due(None, 3600, T0, 30) == T0 + 30_000  # never swept: soon after the start
    assert next_due(T0 - 10_000, 3600, T0, 30) == T0 - 10_000 + 3_600_000
    assert next_due(T0 - 7_200_000, 3600, T0, 30) == T0 + 30_000  # overdue: not at once


def test_decay_sweeps_in_bounded_steps_and_demotes_tiers(chitta: Chitta) -> None:
    clock = Clock()
    episodes = [put(chitta, f"We shipped version {n} of the parser on a Tuesday",
                    kind=Kind.EPISODE) for n in range(3)]  # fmt: skip
    belief = put(chitta, "The team values honest answers over fast ones", kind=Kind.BELIEF)
    worker = Subconscious(chitta, ONLY_DECAY, clock=clock)
    clock.now = T0 + 60 * MS_PER_DAY
    # Four memories, two a step: the third step finds none left and ends the sweep.
    assert sweep(worker, "decay") == 3
    last = worker.status()["tasks"]["decay"]["last"]
    assert (last["seen"], last["changed"], last["steps"]) == (4, 3, 3)
    for i in episodes:
        m = chitta.store.get(i)
        assert m.strength == pytest.approx(0.7 * 2.718281828 ** (-0.03 * 60))
        assert m.tier == "cool" and m.decayed_at == clock.now
    assert last["demoted"] == 3  # hot (0.7) to cool (0.116)
    assert chitta.store.get(belief).strength == pytest.approx(0.7)  # a belief never decays
    assert json.loads(chitta.store.meta(META_PREFIX + "decay"))["finished_ms"] == clock.now
    # Not due again until its interval has passed: a tick then does nothing.
    worker.tick()
    assert worker.status()["tasks"]["decay"]["steps"] == 3
    clock.now += ONLY_DECAY.decay_s * 1000
    assert sweep(worker, "decay") == 3


def test_a_change_made_between_steps_is_kept(chitta: Chitta) -> None:
    clock = Clock()
    ids = [put(chitta, f"We shipped version {n} of the parser on a Tuesday",
               kind=Kind.EPISODE) for n in range(4)]  # fmt: skip
    worker = Subconscious(chitta, ONLY_DECAY, clock=clock)
    clock.now = T0 + 10 * MS_PER_DAY
    worker.tick()  # the first two
    chitta.clock = clock
    strengthened = chitta.strengthen(ids[3])  # read by the sweep's next step afresh
    worker.tick()
    after = chitta.store.get(ids[3])
    assert after.confidence.n == strengthened.confidence.n == 1
    # Its strengthened state, decayed for the ten days since it was last decayed.
    assert after.strength == pytest.approx(strengthened.strength * 2.718281828 ** (-0.03 * 10))


def test_hygiene_merges_in_steps_and_one_undo_takes_back_the_sweep(chitta: Chitta) -> None:
    clock = Clock()
    a, b = put(chitta, PORT), put(chitta, PORT, tags=("db",))
    c, d = put(chitta, "Bob prefers tabs over spaces"), put(chitta, "Bob prefers tabs over spaces")
    put(chitta, "The staging database listens on port 5433")
    worker = Subconscious(chitta, ONLY_HYGIENE, clock=clock)
    clock.now = T0 + 1000
    sweep(worker, "hygiene")
    last = worker.status()["tasks"]["hygiene"]["last"]
    assert (last["seen"], last["merged"], last["conflicts"]) == (5, 2, 2)
    merged = [i for i in (a, b, c, d) if chitta.store.get(i).superseded_by is not None]
    assert len(merged) == 2
    [run] = hygiene.runs(chitta.store)
    assert run == f"d:{T0 + 1000}"
    assert hygiene.undo(chitta.store, run, clock.now) == 2
    assert all(chitta.store.get(i).superseded_by is None for i in (a, b, c, d))


def test_it_waits_for_requests_but_not_for_ever(chitta: Chitta) -> None:
    put(chitta, PORT)
    busy = threading.Event()
    busy.set()
    settings = replace(ONLY_DECAY, max_defer_s=0.3)
    worker = Subconscious(chitta, settings, clock=Clock(T0 + MS_PER_DAY),
                          busy=busy.is_set)  # fmt: skip
    started = time.monotonic()
    worker.tick()
    waited = time.monotonic() - started
    assert waited >= 0.3  # it waited while a request was in flight
    assert worker.status()["tasks"]["decay"]["steps"] == 1  # and then did its step


def test_it_holds_the_writer_lock_only_while_it_works(chitta: Chitta) -> None:
    put(chitta, PORT)
    writer = threading.Lock()
    worker = Subconscious(chitta, ONLY_DECAY, clock=Clock(T0 + MS_PER_DAY), writer=writer)
    with writer:  # a write request is running: the step waits for it
        runner = threading.Thread(target=worker.tick)
        runner.start()
        runner.join(0.3)
        assert runner.is_alive() and worker.status()["tasks"]["decay"]["steps"] == 0
    runner.join(10)
    assert worker.status()["tasks"]["decay"]["steps"] == 1
    assert writer.acquire(blocking=False)  # and let go of it


def test_a_failing_step_is_recorded_and_tried_again_later(
    chitta: Chitta, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    put(chitta, PORT)
    clock = Clock(T0 + MS_PER_DAY)
    worker = Subconscious(chitta, ONLY_DECAY, clock=clock)
    task = worker.tasks[0]

    def broken(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(task, "step", broken)
    worker.tick()
    status = worker.status()["tasks"]["decay"]
    assert "No space left on device" in status["error"] and status["last"] is None
    assert PORT not in caplog.text
    assert status["due_ms"] == clock.now + 300_000  # retried in five minutes
    monkeypatch.undo()
    clock.now += 300_000
    sweep(worker, "decay")
    assert worker.status()["tasks"]["decay"]["error"] is None


def test_a_restart_times_the_next_sweep_from_the_last(chitta: Chitta) -> None:
    put(chitta, PORT)
    clock = Clock(T0 + MS_PER_DAY)
    sweep(Subconscious(chitta, ONLY_DECAY, clock=clock), "decay")
    finished = clock.now
    clock.now += 60_000
    again = Subconscious(chitta, ONLY_DECAY, clock=clock)
    assert again.status()["tasks"]["decay"]["due_ms"] == finished + ONLY_DECAY.decay_s * 1000
    assert last_sweeps(chitta.store)["decay"]["finished_ms"] == finished
    for bad in ("{not json", '{"finished_ms": "yesterday"}', "[1, 2]", '{"finished_ms": true}'):
        chitta.store.set_meta(META_PREFIX + "decay", bad)
        assert "decay" not in last_sweeps(chitta.store)  # unreadable: as if never swept
        Subconscious(chitta, ONLY_DECAY, clock=clock)  # and a worker still starts


def test_off_means_no_thread(chitta: Chitta) -> None:
    worker = Subconscious(chitta, replace(ONLY_DECAY, enabled=False), clock=Clock())
    worker.start()
    assert worker.status()["running"] is False
    worker.stop()


def test_the_thread_stops_between_steps(chitta: Chitta) -> None:
    for n in range(6):
        put(chitta, f"We shipped version {n} of the parser on a Tuesday", kind=Kind.EPISODE)
    worker = Subconscious(chitta, replace(ONLY_DECAY, decay_batch=1, share=0.5),
                          clock=Clock(T0 + MS_PER_DAY))  # fmt: skip
    worker.start()
    deadline = time.monotonic() + 10
    while worker.status()["tasks"]["decay"]["steps"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    worker.stop(timeout=10)
    status = worker.status()
    assert status["running"] is False and status["tasks"]["decay"]["steps"] >= 2
    assert 0 < status["used_share"] <= 1


def test_nothing_runs_while_the_store_is_read_only(
    chitta: Chitta, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(chitta, PORT)
    worker = Subconscious(chitta, ONLY_DECAY, clock=Clock(T0 + MS_PER_DAY))
    monkeypatch.setattr(chitta.store, "read_only", "the file system is read-only")
    worker.tick()
    assert worker.status()["tasks"]["decay"]["steps"] == 0
    monkeypatch.undo()
    worker.tick()
    assert worker.status()["tasks"]["decay"]["steps"] == 1


def test_the_indexes_sweep_renews_attractors_and_settles_built_themes(chitta: Chitta) -> None:
    from chitta.recall.lanes import LANES

    for n in range(5):
        put(chitta, f"We met Oliver in Bergen on day {n} of the trip")
    clock = Clock(T0 + 1000)
    worker = Subconscious(chitta, ONLY_INDEXES, clock=clock)
    sweep(worker, "indexes")  # no themes built, no attractors asked for: nothing to do
    last = worker.status()["tasks"]["indexes"]["last"]
    assert (last["attractors"], last["reassessed"], last["steps"]) == (0, 0, 1)
    assert chitta.store.themes_built() is None  # upkeep never builds them
    chitta.recall("Oliver in Bergen", realm="d", strategy="field")  # builds both
    assert chitta.store.themes_built() is not None
    clock.now += ONLY_INDEXES.indexes_s * 1000
    graph = LANES["graph"]
    original = graph.attractors
    now = [0.0]
    graph_cache = type(original)(ttl=300, clock=lambda: now[0])
    object.__setattr__(graph, "attractors", graph_cache)
    try:
        graph_cache.get(chitta.store, "d", 100)  # as the graph lane asks when it spreads
        now[0] = 200  # within 240 s (two intervals) of its expiry at 300
        assert sweep(worker, "indexes") == 2  # five theme members, three a step
        last = worker.status()["tasks"]["indexes"]["last"]
        assert last["attractors"] == 1 and last["reassessed"] == 5
    finally:
        object.__setattr__(graph, "attractors", original)
