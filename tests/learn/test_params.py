"""What the learner tunes and how a sample changes a recall's config (learn/params.py)."""

from __future__ import annotations

import math

import pytest

from chitta.learn.params import BALANCE, acted, apply, params_of, spec
from chitta.recall.config import preset


def test_the_default_preset_tunes_the_balance_the_tag_boost_and_its_other_lanes() -> None:
    assert params_of(preset("hybrid")) == ("balance", "tag", "lane:ctx", "lane:common",
                                           "lane:code", "lane:when")  # fmt: skip


def test_a_lane_fused_by_a_fixed_boost_has_no_weight_to_tune() -> None:
    assert "lane:dated" not in params_of(preset("hybrid"))  # rsf: a boost, like tag's
    assert "lane:dated" in params_of(preset("field"))  # rrf: a weight


def test_the_spread_and_hebbian_rate_are_tuned_only_where_the_graph_lane_runs() -> None:
    assert "spread_strength" in params_of(preset("field"))
    assert "hebbian" in params_of(preset("field"))
    assert "spread_strength" not in params_of(preset("hybrid"))
    assert params_of(preset("keyword")) == ()


@pytest.mark.parametrize("strategy", ["hybrid", "field"])
def test_the_presets_values_leave_the_weights_as_they_are(strategy: str) -> None:
    config = preset(strategy)
    values = {n: spec(n).value(spec(n).prior_unit) for n in params_of(config)}
    tuned = apply(config, values)
    for lane, weight in config.fusion_weights().items():
        assert math.isclose(tuned.fusion_weights()[lane], weight)
    assert dict(tuned.rsf_boosts) == pytest.approx(dict(config.rsf_boosts))


def test_the_balance_moves_weight_between_the_semantic_and_keyword_lanes() -> None:
    config = preset("hybrid")
    tuned = apply(config, {"balance": 0.7}).fusion_weights()
    base = config.fusion_weights()
    assert tuned["sem"] == pytest.approx(base["sem"] * 1.4)
    assert tuned["kw"] == pytest.approx(base["kw"] * 0.6)


def test_the_tag_multiplier_scales_the_boost_under_rsf_and_the_weight_under_rrf() -> None:
    rsf = apply(preset("hybrid"), {"tag": 2.0})
    assert rsf.rsf_boosts["tag"] == pytest.approx(0.1)
    rrf = preset("field")
    assert apply(rrf, {"tag": 2.0}).lane_weights["tag"] == pytest.approx(
        rrf.lane_weights["tag"] * 2
    )


def test_a_weight_acts_only_when_its_lane_found_something() -> None:
    assert acted("balance", frozenset({"sem", "kw"}))
    assert not acted("balance", frozenset({"sem"}))
    assert acted("lane:ctx", frozenset({"ctx"}))
    assert not acted("lane:code", frozenset({"sem", "kw"}))
    assert acted("spread_decay", frozenset({"graph"}))


def test_values_are_clamped_to_their_range() -> None:
    assert BALANCE.value(2.0) == BALANCE.hi
    assert BALANCE.unit(-1.0) == 0.0
