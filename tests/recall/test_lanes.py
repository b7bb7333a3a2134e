"""The hdc, xr and corr lanes, the rsf fusion mode and the field preset, on small stores."""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.config import RecallSwitches, Settings, load_settings
from chitta.errors import BadArgument
from chitta.recall.config import HYBRID_RSF, KNOWN_LANES, PRESETS, preset
from chitta.recall.lanes import LANES

NOTES = [
    ("We chose SQLite WAL over a custom log because crash recovery comes free", "storage"),
    ("The deploy script lives in ops/deploy.sh and needs the VPN", "ops"),
    ("Alice prefers tabs over spaces in Python code", "style"),
    ("The quarterly report is due on the first Monday of March", "calendar"),
    ("Zebra-7 is the codename of the billing migration project", "billing"),
]
RANKED = sorted(KNOWN_LANES - {"corr"})  # every lane but the correction lookup

#: The lanes that work from the others' candidates: off when one lane is tested alone.
DERIVED = ("graph", "ctx", "common", "dated")


@pytest.fixture
def stocked(chitta: Chitta) -> Chitta:
    for text, tags in NOTES:
        chitta.remember(text, realm="demo", tags=tags)
    return chitta


def ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


# --- the field preset, strategies and switches -------------------------------------------------


def test_field_runs_every_lane_built_and_names_are_known() -> None:
    assert set(LANES) <= KNOWN_LANES
    # Every lane built but xr, which leaves the realm: only cross_realm adds it.
    assert set(PRESETS["field"].lane_weights) == set(LANES) - {"xr"}
    assert PRESETS["field"].corrections and PRESETS["hybrid"].corrections
    assert "hdc" not in PRESETS["hybrid"].lane_weights  # docs/benchmarks.md: it does not pay
    with pytest.raises(BadArgument, match="field"):
        preset("everything")


def test_rsf_settings_out_of_range_are_refused() -> None:
    base = preset("hybrid")
    for bad in ({"rsf_min_span": -0.1}, {"rsf_min_span": 1.5},
                {"rsf_lanes": {"sem": -1.0}}, {"rsf_lanes": {"sem": math.nan}},
                {"rsf_lanes": {"sem": math.inf}}, {"rsf_lanes": {"semm": 0.5}}):  # fmt: skip
        with pytest.raises(BadArgument):
            replace(base, **bad)
    assert replace(base, rsf_min_span=0.0).rsf_min_span == 0.0


def test_unknown_fusion_and_lane_name_the_valid_ones(stocked: Chitta) -> None:
    with pytest.raises(BadArgument, match="unknown fusion 'borda'; choose one of: rrf, rsf"):
        stocked.recall("tabs", realm="demo", fusion="borda")
    with pytest.raises(BadArgument, match="lanes are: .*hdc.*xr"):
        stocked.recall("tabs", realm="demo", ablate=["hdcc"])
    with pytest.raises(BadArgument, match="CHITTA_ABLATE_LANES"):
        load_settings({"CHITTA_ABLATE_LANES": "hdc,nope"})
    assert load_settings({"CHITTA_ABLATE_LANES": "hdc,xr,corr"}).recall.ablate_lanes == (
        "hdc", "xr", "corr",
    )  # fmt: skip


# --- hdc ---------------------------------------------------------------------------------------


def test_hdc_lane_alone_finds_the_right_memory(stocked: Chitta) -> None:
    others = ["sem", "kw", "tag", "xr", "ep", "theme", "code", "when", *DERIVED]
    result = stocked.recall("where does the deployment script live?", realm="demo",
                            strategy="field", ablate=others)  # fmt: skip
    assert result.lanes_run == ("hdc",)
    assert "ops/deploy.sh" in result.hits[0].memory.content
    assert set(result.hits[0].lanes) == {"hdc"} and result.hits[0].lanes["hdc"].raw > 0


def test_disable_hdc_and_ablation_skip_the_lane(stocked: Chitta, embedder) -> None:
    assert "hdc" in stocked.recall("tabs", realm="demo", strategy="field").lanes_run
    assert "hdc" not in stocked.recall("tabs", realm="demo", strategy="field",
                                       disable_hdc=True).lanes_run  # fmt: skip
    assert "hdc" not in stocked.recall("tabs", realm="demo", strategy="field",
                                       ablate=["hdc"]).lanes_run  # fmt: skip
    env = Chitta(stocked.store, embedder, switches=RecallSwitches(ablate_lanes=("hdc",)))
    result = env.recall("tabs", realm="demo", strategy="field")
    assert "hdc" not in result.lanes_run and "hdc" not in result.timing_ms


def test_hdc_follows_forget_restore_and_purge(stocked: Chitta) -> None:
    others = ["sem", "kw", "tag", "xr", "ep", "theme", "code", "when", *DERIVED]
    only_hdc = dict(realm="demo", strategy="field", ablate=others)
    target = stocked.recall("deployment script location", **only_hdc).hits[0].memory.id
    stocked.forget(target)
    assert target not in ids(stocked.recall("deployment script location", **only_hdc))
    stocked.restore(target)
    assert ids(stocked.recall("deployment script location", **only_hdc))[0] == target
    stocked.purge(target)
    assert target not in ids(stocked.recall("deployment script location", **only_hdc))


# --- xr ----------------------------------------------------------------------------------------


def test_cross_realm_is_off_unless_asked_and_marks_its_hits(stocked: Chitta) -> None:
    away = stocked.remember("The staging deploy uses tools/ship.sh on Fridays", realm="ops").id
    plain = stocked.recall("deploy script", realm="demo")
    assert "xr" not in plain.lanes_run and away not in ids(plain)
    result = stocked.recall("deploy script", realm="demo", cross_realm=True)
    assert result.lanes_run[-1] == "xr"
    hit = next(h for h in result.hits if h.memory.id == away)
    assert set(hit.lanes) == {"xr"} and hit.memory.realm == "ops"
    home = [h for h in result.hits if h.memory.realm == "demo"]
    assert all("xr" not in h.lanes for h in home)
    assert "ops/deploy.sh" in result.hits[0].memory.content  # the realm's own answer leads
    assert away not in ids(stocked.recall("deploy script", realm="demo", strategy="field"))
    assert away in ids(stocked.recall("deploy script", realm="demo", strategy="field",
                                      cross_realm=True))  # fmt: skip
    ablated = stocked.recall("deploy script", realm="demo", cross_realm=True, ablate=["xr"])
    assert away not in ids(ablated)


def test_cross_realm_keeps_the_agent_axis(chitta: Chitta) -> None:
    mine = chitta.remember("Ann keeps her deploy notes in the wiki", realm="b", agent_id="ann").id
    theirs = chitta.remember("Bob keeps his deploy notes in a notebook", realm="b",
                             agent_id="bob").id  # fmt: skip
    chitta.remember("Nothing about anything in this realm at all", realm="a", agent_id="ann")
    found = ids(chitta.recall("deploy notes", realm="a", agent_id="ann", cross_realm=True))
    assert mine in found and theirs not in found


# --- corr --------------------------------------------------------------------------------------


@pytest.fixture
def corrected(stocked: Chitta) -> tuple[Chitta, str, str]:
    ship = stocked.remember("Do not run ops/deploy.sh any more: use `tools ship` instead",
                            realm="demo", kind="correction", tags="deploy").id  # fmt: skip
    wal = stocked.remember("WAL mode must stay on; the default journal loses writes",
                           realm="demo", kind="correction").id  # fmt: skip
    return stocked, ship, wal


def test_corrections_named_by_the_query_come_back_beside_the_hits(corrected) -> None:
    chitta, ship, wal = corrected
    result = chitta.recall("how do I run deploy.sh with WAL?", realm="demo")
    assert [(c.memory.id, c.keys) for c in result.corrections] == [
        (wal, ("wal",)),  # newest first
        (ship, ("deploy.sh",)),
    ]
    assert all("corr" not in h.lanes for h in result.hits)  # never fused
    assert "corr" not in result.lanes_run and "corr" in result.timing_ms
    assert chitta.recall("quarterly report", realm="demo").corrections == ()
    assert chitta.recall("deploy.sh", realm="elsewhere").corrections == ()


def test_corrections_survive_every_ranked_lane_ablated_and_any_cut(corrected) -> None:
    chitta, ship, wal = corrected
    for strategy in PRESETS:
        result = chitta.recall("deploy WAL", realm="demo", strategy=strategy, limit=1,
                               ablate=list(RANKED))  # fmt: skip
        assert result.hits == () and result.lanes_run == ()
        assert {c.memory.id for c in result.corrections} == {ship, wal}
    cut = chitta.recall("deploy WAL", realm="demo", limit=1, fusion="rsf")
    assert len(cut.hits) == 1 and len(cut.corrections) == 2
    assert chitta.recall("deploy WAL", realm="demo", ablate=["corr"]).corrections == ()


def test_superseded_and_forgotten_corrections_do_not_match(corrected) -> None:
    chitta, ship, wal = corrected
    newer = chitta.remember("Deploys go through `tools ship` on Zebra-7 only", realm="demo",
                            kind="correction", tags="deploy", supersedes=ship).id  # fmt: skip
    found = {c.memory.id for c in chitta.recall("deploy", realm="demo").corrections}
    assert found == {newer}
    chitta.forget(newer)
    assert chitta.recall("deploy", realm="demo").corrections == ()
    chitta.restore(newer)
    assert [c.memory.id for c in chitta.recall("zebra-7", realm="demo").corrections] == [newer]


# --- rsf ---------------------------------------------------------------------------------------


def test_rsf_fusion_mode_keeps_lane_contributions(stocked: Chitta) -> None:
    """hybrid fuses by rsf with its own weights; the scoring stage weighs confidence, so the
    fused contributions carry seed 001's confidence factor only with that stage off."""
    query = "why not our own write-ahead log?"
    assert preset("hybrid").fusion == "rsf"
    result = stocked.recall(query, realm="demo")
    top = result.hits[0]
    assert "SQLite WAL" in top.memory.content
    assert top.score == pytest.approx(sum(h.contribution for h in top.lanes.values()))
    assert top.lanes["sem"].contribution == pytest.approx(HYBRID_RSF["sem"])  # best in sem
    unscored = stocked.recall(query, realm="demo", ablate=["scoring"])
    top = unscored.hits[0]
    factor = 0.5 + 0.5 * top.memory.confidence.mu
    assert top.lanes["sem"].contribution == pytest.approx(HYBRID_RSF["sem"] * factor)
    seeded = stocked.recall(query, realm="demo", strategy="field", fusion="rsf")
    assert seeded.hits[0].lanes["sem"].contribution == pytest.approx(0.6)  # seed 001's weight
    tagged = stocked.recall("storage", realm="demo", ablate=["scoring"])
    hit = next(h for h in tagged.hits if "tag" in h.lanes)
    assert hit.lanes["tag"].contribution == pytest.approx(
        0.05 * (0.5 + 0.5 * hit.memory.confidence.mu)
    )
    assert [h.score for h in tagged.hits] == sorted((h.score for h in tagged.hits), reverse=True)


def test_admit_debug_counts_correction_keys_without_their_text(corrected) -> None:
    from chitta.recall.observe import admit_lines

    chitta, ship, wal = corrected
    lines = admit_lines(chitta.recall("deploy.sh and WAL", realm="demo"))
    assert f"chitta admit: {ship} corr keys=1 correction" in lines
    # Only ids (upper-case ULIDs), lane names, figures and outcomes: no word of the stored text.
    text_words = {"deploy", "wal", "mode", "journal", "tools", "ship", "default", "writes"}
    for line in lines:
        assert not text_words & set(re.findall(r"[a-z]+", line.lower().replace("chitta", "")))


WORDS = ["sqlite", "deploy", "alice", "tabs", "report", "zebra"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=2, max_size=3),
            st.sampled_from(["r1", "r2", "r3"]),
            st.sampled_from(["", "a1", "a2"]),
        ),
        min_size=1,
        max_size=10,
    ),
    st.sampled_from(WORDS),
    st.sampled_from([None, "a1"]),
)
def test_field_leaves_the_realm_only_through_xr_and_never_the_agent(
    embedder, items, query, agent
) -> None:
    """Property: under `field`, no hit leaves the realm unless cross_realm asks; then a hit
    from another realm came by `xr` alone; and every hit keeps the asked agent."""
    with (
        tempfile.TemporaryDirectory() as home,
        Chitta.open(Settings(home=Path(home)), embedder=embedder) as c,
    ):
        for words, realm, a in items:
            c.remember("note about " + " ".join(words), realm=realm, agent_id=a or None)
        home = c.recall(query, realm="r1", agent_id=agent, strategy="field", limit=50)
        assert all(hit.memory.realm == "r1" for hit in home.hits)
        found = c.recall(query, realm="r1", agent_id=agent, strategy="field", limit=50,
                         cross_realm=True)  # fmt: skip
        for hit in found.hits:
            assert hit.memory.realm == "r1" or set(hit.lanes) == {"xr"}
            assert hit.memory.realm != "r1" or "xr" not in hit.lanes
            assert agent is None or hit.memory.agent_id == agent


def test_derived_lanes_never_score_what_only_xr_found(chitta: Chitta) -> None:
    """A cross-realm memory ranks by its xr share alone: it does not seed ctx, common or graph
    (here, "melanie" is common in r1, so the common lane would otherwise pick it up)."""
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    for i in range(24):
        chitta.remember(f"Melanie: note {i}, we went walking on {days[i % 7]} number {i}",
                        realm="r1")  # fmt: skip
    away = chitta.remember("Melanie painted a sunset over the lake last summer", realm="r2").id
    result = chitta.recall("What did Melanie paint?", realm="r1", strategy="field", limit=50,
                           cross_realm=True)  # fmt: skip
    assert result.plan is not None and "melanie" in result.plan.common
    hit = next(h for h in result.hits if h.memory.id == away)
    assert set(hit.lanes) == {"xr"} and hit.memory.realm == "r2"
    assert any("common" in h.lanes for h in result.hits)  # the lane ran, on r1's memories
