"""The learner's formulas (learn/posterior.py): posteriors move the right way and stay in
range, whatever the evidence."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from chitta.learn.params import BALANCE, SPREAD_DECAY, multiplier
from chitta.learn.posterior import PRIOR_WORTH, Evidence, draw, observe, posterior

SPECS = st.sampled_from([BALANCE, SPREAD_DECAY, multiplier("lane:ctx"), multiplier("tag")])
UNIT = st.floats(0.0, 1.0)
EVIDENCE = st.builds(lambda w, at: Evidence(w, w * at), st.floats(0.0, 5000.0), st.floats(0.0, 1.0))


@given(SPECS)
def test_without_evidence_the_mean_is_the_presets_value(spec) -> None:
    post = posterior(spec, Evidence())
    assert math.isclose(spec.value(post.mean), spec.prior, abs_tol=1e-9)
    if spec.family == "gauss":
        assert math.isclose(post.sd, spec.prior_sd_unit)


@given(SPECS, EVIDENCE, UNIT, st.floats(0.01, 1.0))
def test_a_good_recall_pulls_the_mean_towards_what_it_used(spec, evidence, used, gain) -> None:
    before = posterior(spec, evidence).mean
    assume(abs(used - before) > 1e-6)
    after = posterior(spec, evidence + observe(used, before, gain)).mean
    assert (after - before) * (used - before) > 0  # towards
    assert abs(after - before) <= abs(used - before)  # never past it


@given(SPECS, EVIDENCE, UNIT, st.floats(0.01, 1.0))
def test_a_bad_recall_pushes_the_mean_away_from_what_it_used(spec, evidence, used, loss) -> None:
    before = posterior(spec, evidence).mean
    assume(abs(used - before) > 1e-6)
    after = posterior(spec, evidence + observe(used, before, -loss)).mean
    assert (after - before) * (used - before) <= 0  # away, or still at a bound


@given(SPECS, EVIDENCE, UNIT)
def test_no_advantage_teaches_nothing(spec, evidence, used) -> None:
    assert observe(used, posterior(spec, evidence).mean, 0.0) == Evidence()


@given(SPECS, EVIDENCE, st.integers(0, 2**32 - 1))
def test_draws_stay_in_range(spec, evidence, seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        u = draw(spec, evidence, rng)
        assert 0.0 <= u <= 1.0
        assert spec.lo <= spec.value(u) <= spec.hi


@given(SPECS, EVIDENCE, st.floats(1.0, 1000.0))
def test_evidence_narrows_the_posterior(spec, evidence, more) -> None:
    mean = posterior(spec, evidence).mean
    wider = posterior(spec, Evidence(evidence.weight, mean * evidence.weight))
    narrower = posterior(spec, Evidence(evidence.weight + more, mean * (evidence.weight + more)))
    assert narrower.sd <= wider.sd + 1e-12


def test_draws_follow_the_posterior() -> None:
    """Thompson sampling draws from the posterior: their mean and spread are its own."""
    rng = np.random.default_rng(7)
    for spec in (BALANCE, multiplier("lane:ctx")):
        evidence = Evidence(3 * PRIOR_WORTH, 3 * PRIOR_WORTH * 0.7)
        post = posterior(spec, evidence)
        draws = [draw(spec, evidence, rng) for _ in range(20_000)]
        assert abs(np.mean(draws) - post.mean) < 0.01
        assert abs(np.std(draws) - post.sd) < 0.01
