"""The scoring stage and lateral inhibition inside recall, on small stores with known answers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chitta.api import Chitta
from chitta.config import load_settings
from chitta.errors import BadArgument
from chitta.recall.config import preset
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source

STAGES_OFF = ["scoring", "inhibition"]


def put(chitta: Chitta, text: str, **fields: object) -> str:
    """Insert a memory directly (no near-duplicate gate), embedded by the real model."""
    now = chitta.clock()
    m = Memory(
        id=new_id(now), kind=Kind.INSIGHT, content=text, realm="demo", agent_id="", channel="",
        tags=(), source=Source(), created_at=now, updated_at=now, event_time=None,
        confidence=Confidence.initial(0.01), strength=0.7, tier="hot", decayed_at=now,
    )  # fmt: skip
    m = replace(m, **fields)
    chitta.store.insert([(m, chitta.embedder.embed([text]).vectors[0])])
    return m.id


def test_a_correction_outranks_an_equally_relevant_operational_memory(chitta: Chitta) -> None:
    text = "The staging database listens on port 5433"
    operational = put(chitta, text, tags=("operational",))  # older id: first on a tie
    correction = put(chitta, text, kind=Kind.CORRECTION)
    put(chitta, "Lunch on Fridays is at the Thai place near the office")
    fused = chitta.recall("staging database port", realm="demo", ablate=STAGES_OFF)
    assert [h.memory.id for h in fused.hits[:2]] == [operational, correction]
    # Equally relevant: the same text; the older wins each lane's tie, so it leads a little.
    assert fused.hits[1].score == pytest.approx(fused.hits[0].score, rel=0.02)
    assert fused.hits[0].final == fused.hits[0].score  # stages off: final is the fused score

    for ablate in (["inhibition"], []):
        result = chitta.recall("staging database port", realm="demo", ablate=ablate)
        top = result.hits[0]
        beaten = next(d for d in result.decisions if d.id == operational)
        assert top.memory.id == correction
        assert (top.factors["kind"], beaten.factors["kind"]) == (1.3, 0.8)
        assert top.final > beaten.final
        # The fused score is untouched: still the sum of the lanes' contributions.
        assert top.score == pytest.approx(sum(h.contribution for h in top.lanes.values()))
    # With inhibition on, the operational copy (cosine 1) also sinks below the unrelated one.
    assert beaten.factors["inhibition"] == pytest.approx(0.3, abs=1e-4)


def test_inhibition_reorders_near_duplicates(chitta: Chitta) -> None:
    first = put(chitta, "The deploy script lives in ops/deploy.sh and needs the VPN")
    twin = put(chitta, "The deploy script lives in ops/deploy.sh and it needs the VPN")
    other = put(chitta, "Deploys from home need the office VPN switched on first")
    for filler in ("Alice prefers tabs over spaces", "The quarterly report is due in March"):
        put(chitta, filler)
    query = "deploy script VPN"
    plain = chitta.recall(query, realm="demo", ablate=["inhibition"])
    assert [h.memory.id for h in plain.hits[:3]] == [first, twin, other]

    result = chitta.recall(query, realm="demo", limit=2)
    assert [h.memory.id for h in result.hits] == [first, other]
    decision = next(d for d in result.decisions if d.id == twin)
    assert decision.outcome == "inhibited"
    assert decision.factors["inhibition"] < 0.5  # cosine ~0.99: close to 1 − 0.7
    assert decision.final == pytest.approx(
        decision.score * decision.factors["product"] * decision.factors["inhibition"]
    )
    assert result.dropped.get("inhibited") == 1
    assert result.hits[1].factors["inhibition"] == 1.0


def test_stage_switches_and_timings(chitta: Chitta) -> None:
    put(chitta, "The deploy script lives in ops/deploy.sh and needs the VPN")
    put(chitta, "Deploys from home need the office VPN switched on first")
    on = chitta.recall("deploy", realm="demo")
    assert {"score", "inhibit"} <= set(on.timing_ms)
    assert set(on.hits[0].factors) == {
        "kind", "actr", "strength", "confidence", "tier", "replication", "provenance", "product",
        "inhibition",
    }  # fmt: skip
    off = chitta.recall("deploy", realm="demo", ablate=STAGES_OFF)
    assert not {"score", "inhibit"} & set(off.timing_ms)
    assert off.hits[0].factors == {}
    config = preset("hybrid").without({"scoring"})
    assert (config.scoring, config.inhibition) == (False, True)
    assert config.pool(10) == 40 and config.without({"inhibition"}).pool(10) == 10
    with pytest.raises(BadArgument, match="stages are: inhibition, scoring, updates"):
        chitta.recall("deploy", realm="demo", ablate=["scorin"])
    # The process-wide switch takes stage names too.
    switches = load_settings({"CHITTA_ABLATE_LANES": "scoring,inhibition"}).recall
    chitta.switches = switches
    assert chitta.recall("deploy", realm="demo").hits[0].factors == {}


def test_recalled_memories_gain_activation(chitta: Chitta) -> None:
    """ACT-R: a memory recalled a moment ago is more active than it was before."""
    now = [1_800_000_000_000]
    scoring = replace(chitta.scoring, actr_weight=0.1)  # off by default (docs/benchmarks.md)
    clocked = Chitta(chitta.store, chitta.embedder, clock=lambda: now[0], scoring=scoring)
    target = put(chitta, "The deploy script lives in ops/deploy.sh", created_at=now[0] - 86_400_000)
    before = clocked.recall("deploy script", realm="demo").hits[0]
    now[0] += 1_000
    after = clocked.recall("deploy script", realm="demo").hits[0]
    assert before.memory.id == after.memory.id == target
    assert after.factors["actr"] > before.factors["actr"]
    assert before.factors["actr"] == pytest.approx(1.0)  # one presentation a day ago


def test_replication_counts_distinct_sessions_when_switched_on(chitta: Chitta) -> None:
    text = "The staging database listens on port 5433"
    first = chitta.remember(text, realm="demo", source=Source(session="s1"))
    chitta.remember(text, realm="demo", source=Source(session="s2"))  # reinforces: replication
    chitta.remember(text, realm="demo", source=Source(session="s2"))  # same session: not again
    assert chitta.store.replication_sessions([first.id]) == {first.id: {"s2"}}
    hit = chitta.recall("staging port", realm="demo").hits[0]
    assert hit.factors["replication"] == 1.0  # off by default
    chitta.scoring = replace(chitta.scoring, replication_max=1.15)
    hit = chitta.recall("staging port", realm="demo").hits[0]
    assert hit.factors["replication"] == pytest.approx(1.075)  # two sessions


def test_the_pool_is_read_best_first_past_dropped_candidates_and_no_further(
    chitta: Chitta,
) -> None:
    from chitta.recall.fusion import Fused
    from chitta.recall.rank import _load_pool

    ids = [put(chitta, f"Note {i}: the build of module {i} takes {i} minutes") for i in range(12)]
    new = put(chitta, "Note 100: the build of the old module takes ten minutes now")
    old = put(chitta, "Note 99: the build of the old module took an hour", superseded_by=new)
    # The order the lanes fused: a gone memory and the superseded one among the first.
    order = [ids[0], "gone", old, *ids[1:]]
    fused = [Fused(i, 1.0 - r / 100, {}) for r, i in enumerate(order)]
    asked: list[list[str]] = []

    def load(wanted: list[str]) -> dict[str, Memory]:
        asked.append(wanted)
        return chitta.store.get_many(wanted)

    pool, dropped, stop = _load_pool(load, fused, 4, include_superseded=False)
    assert [m.id for _, m in pool] == [ids[0], ids[1], ids[2], ids[3]]
    assert [(r.fused.id, r.outcome) for r in dropped] == [("gone", "missing"),
                                                          (old, "superseded")]  # fmt: skip
    assert stop == 6 and sum(map(len, asked)) == 6  # read no further than the pool needed
