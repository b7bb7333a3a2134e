"""Bayesian confidence, decay and tiers: the arithmetic of a memory's lifecycle."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.store.confidence import (
    INITIAL_MU,
    PRIOR_WEIGHT,
    UNIFORM_VARIANCE,
    Confidence,
    decay,
    decay_strength,
    observe,
    reinforce,
    tier_for,
    weaken_strength,
)
from chitta.store.kinds import DECAY_RATE


def test_initial_is_a_beta_with_two_pseudo_observations() -> None:
    c = Confidence.initial(0.01)
    # Beta(1.4, 0.6): variance = 1.4 * 0.6 / (2^2 * 3)
    assert (c.mu, c.n, c.tau) == (INITIAL_MU, 0, 0.01)
    assert c.sigma_sq == pytest.approx(1.4 * 0.6 / 12)
    assert Confidence.initial(0.0, mu=0.9).mu == 0.9


def test_confirmation_raises_mu_lowers_variance_counts() -> None:
    c = Confidence.initial(0.01)
    after = observe(c, 1.0)
    assert after.mu > c.mu
    assert after.mu == pytest.approx((1.4 + 1) / 3)  # Beta(2.4, 0.6)
    assert after.sigma_sq < c.sigma_sq
    assert after.n == 1
    assert after.tau == c.tau
    again = observe(after, 1.0)
    assert again.mu > after.mu and again.sigma_sq < after.sigma_sq and again.n == 2


def test_refutation_lowers_mu() -> None:
    c = Confidence.initial(0.01)
    after = observe(c, 0.0)
    assert after.mu < c.mu
    assert after.mu == pytest.approx(1.4 / 3)  # Beta(1.4, 1.6)
    assert after.n == 1


def test_observation_is_clamped_to_unit_interval() -> None:
    c = Confidence.initial(0.01)
    assert observe(c, 7.0) == observe(c, 1.0)
    assert observe(c, -3.0) == observe(c, 0.0)


@pytest.mark.parametrize("days", [0.5, 1.0, 30.0, 365.0])
def test_decay_shrinks_mu_by_exp_tau_days(days: float) -> None:
    c = observe(Confidence.initial(0.03), 1.0)
    after = decay(c, days)
    assert after.mu == pytest.approx(c.mu * math.exp(-0.03 * days))
    # Uncertainty grows, but never past what a Beta with that mean and the prior's weight has.
    bound = after.mu * (1 - after.mu) / (PRIOR_WEIGHT + 1)
    assert 0 < after.sigma_sq <= min(bound, UNIFORM_VARIANCE)
    if bound > c.sigma_sq:
        assert after.sigma_sq > c.sigma_sq
    assert (after.n, after.tau) == (c.n, c.tau)


def test_decay_never_changes_a_tau_zero_memory() -> None:
    c = observe(Confidence.initial(0.0), 1.0)
    assert decay(c, 10_000.0) == c
    assert decay_strength(0.8, 0.0, 10_000.0) == 0.8


def test_decay_of_no_time_changes_nothing() -> None:
    c = Confidence.initial(0.05)
    assert decay(c, 0.0) == c
    assert decay(c, -5.0) == c


def test_strength_steps_and_decay() -> None:
    assert reinforce(0.7) == pytest.approx(0.8)
    assert reinforce(0.95) == 1.0
    assert weaken_strength(0.05) == 0.0
    assert decay_strength(0.8, 0.05, 10.0) == pytest.approx(0.8 * math.exp(-0.5))


@pytest.mark.parametrize(
    ("strength", "tier"),
    [
        (1.0, "hot"),
        (0.6, "hot"),
        (0.5999, "warm"),
        (0.3, "warm"),
        (0.2999, "cool"),
        (0.1, "cool"),
        (0.0999, "cold"),
        (0.0, "cold"),
    ],
)
def test_tier_thresholds(strength: float, tier: str) -> None:
    assert tier_for(strength) == tier


STEP = st.one_of(
    st.tuples(st.just("observe"), st.floats(0.0, 1.0)),
    # Up to ten years unreinforced in one step.
    st.tuples(st.just("decay"), st.floats(0.0, 3650.0)),
)


@settings(max_examples=300, deadline=None)
@given(
    tau=st.sampled_from(sorted(set(DECAY_RATE.values()))),
    mu=st.floats(0.01, 0.99),
    steps=st.lists(STEP, max_size=60),
)
def test_mu_stays_a_probability_and_variance_positive(tau, mu, steps) -> None:
    c = Confidence.initial(tau, mu)
    observations = 0
    for op, x in steps:
        c = observe(c, x) if op == "observe" else decay(c, x)
        observations += op == "observe"
        assert 0.0 <= c.mu <= 1.0
        assert 0.0 < c.sigma_sq <= UNIFORM_VARIANCE + 1e-12
        assert c.n == observations
        assert c.tau == tau
