"""The bounded scoring factors: exact values, their ranges, and the bound on the product."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.recall.fusion import Fused
from chitta.recall.scoring import (
    TIER_SIGNAL,
    actr_factor,
    base_level,
    bounded_product,
    by_own_factors,
    centred,
    factors,
    replication_factor,
    score,
)
from chitta.recall.scoring_config import DEFAULT, ScoringConfig
from chitta.store.access import AccessHistory
from chitta.store.confidence import Confidence
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source

NOW = 1_800_000_000_000
DAY_MS = 86_400_000
ACTR_ON = replace(DEFAULT, actr_weight=0.1)  # off by default (docs/benchmarks.md)


def memory(**fields: object) -> Memory:
    base = Memory(
        id="m1", kind=Kind.INSIGHT, content="some memory text", realm="work", agent_id="",
        channel="", tags=(), source=Source(), created_at=NOW - DAY_MS, updated_at=NOW,
        event_time=None, confidence=Confidence.initial(0.01), strength=0.7, tier="hot",
    )  # fmt: skip
    return replace(base, **fields)


def test_kind_priors_are_the_seed_values_and_unknown_kinds_are_neutral() -> None:
    assert DEFAULT.prior(Kind.CORRECTION) == DEFAULT.prior(Kind.PREFERENCE) == 1.3
    assert DEFAULT.prior(Kind.WISDOM) == 1.1
    assert DEFAULT.prior(Kind.INSIGHT) == 1.05
    assert DEFAULT.prior(Kind.EPISODE) == 0.7
    assert DEFAULT.prior(Kind.BELIEF) == 1.0  # not named by the seed
    # The seed's fine-grained "operational" kind is a tag, and it wins over the kind.
    assert DEFAULT.prior(Kind.INSIGHT, ("ops", "operational")) == 0.8


def test_base_level_is_the_act_r_sum() -> None:
    """B = ln(Σ t_j^-d) (Anderson & Schooler 1991) when every presentation is known."""
    ages = [10.0, 100.0, 1000.0]
    expected = math.log(sum(t**-0.5 for t in ages))
    assert base_level(ages, 3, 1000.0, 0.5) == pytest.approx(expected)
    assert base_level([], 0, 100.0, 0.5) == -math.inf


def test_base_level_approximates_older_presentations() -> None:
    """Petrov (2006): evenly spread old presentations are close to their exact sum."""
    exact_ages = [float(t) for t in range(100, 10_001, 100)]  # 100 presentations
    exact = base_level(exact_ages, 100, 10_000.0, 0.5)
    approx = base_level(exact_ages[:32], 100, 10_000.0, 0.5)
    assert approx == pytest.approx(exact, abs=0.05)
    # Only the count known (an imported memory): the all-approximate form.
    assert base_level([], 5, 3600.0, 0.5) == pytest.approx(math.log(5 / 0.5 * 3600**-0.5))


def test_recency_and_frequency_raise_the_actr_factor() -> None:
    old = factors(memory(), None, 0, NOW, ACTR_ON)["actr"]
    once = factors(memory(), AccessHistory((NOW - 60_000,), 1), 0, NOW, ACTR_ON)["actr"]
    often = factors(
        memory(), AccessHistory(tuple(NOW - i * 60_000 for i in range(1, 11)), 10), 0, NOW, ACTR_ON
    )["actr"]
    assert old == pytest.approx(1.0)  # one presentation a day ago is the reference
    assert old < once < often <= 1 + ACTR_ON.actr_weight
    ancient = factors(memory(created_at=NOW - 400 * DAY_MS), None, 0, NOW, ACTR_ON)["actr"]
    assert 1 - ACTR_ON.actr_weight <= ancient < old
    # Off by default: the factor is exactly 1 however recent.
    assert factors(memory(), AccessHistory((NOW,), 1), 0, NOW, DEFAULT)["actr"] == 1.0


def test_a_new_memory_of_a_neutral_kind_keeps_its_fused_score() -> None:
    fresh = memory(kind=Kind.BELIEF)
    s = score(0.03, fresh, None, 0, NOW, DEFAULT)
    assert s.factors["strength"] == s.factors["confidence"] == s.factors["tier"] == 1.0
    assert s.final == pytest.approx(0.03)


def test_strength_confidence_tier_and_replication() -> None:
    assert centred(0.7, 0.7) == 0 and centred(1.0, 0.7) == 1 and centred(0.0, 0.7) == -1
    strong = memory(strength=1.0, confidence=replace(Confidence.initial(0.01), mu=1.0))
    f = factors(strong, None, 0, NOW, DEFAULT)
    assert f["strength"] == pytest.approx(1.1) and f["confidence"] == pytest.approx(1.1)
    assert factors(memory(tier="cold"), None, 0, NOW, DEFAULT)["tier"] == pytest.approx(0.95)
    assert TIER_SIGNAL["hot"] > TIER_SIGNAL["warm"] > TIER_SIGNAL["cool"] > TIER_SIGNAL["cold"]
    assert replication_factor(5, 0.0) == 1.0  # off by default
    assert replication_factor(1, 1.15) == 1.0
    assert replication_factor(2, 1.15) == pytest.approx(1.075)
    assert replication_factor(1000, 1.15) < 1.15


def test_the_product_is_clamped() -> None:
    config = ScoringConfig(bounds_min=0.5, bounds_max=1.5)
    assert bounded_product({"a": 1.3, "b": 1.25, "c": 1.2}, config) == 1.5
    assert bounded_product({"a": 0.5, "b": 0.75}, config) == 0.5
    assert bounded_product({"a": 1.1, "b": 0.9}, config) == pytest.approx(0.99)


unit = st.floats(0.0, 1.0)
configs = st.builds(
    ScoringConfig,
    actr_weight=st.floats(0.0, 0.25),
    strength_weight=st.floats(0.0, 0.25),
    confidence_weight=st.floats(0.0, 0.25),
    tier_weight=st.floats(0.0, 0.25),
    replication_max=st.sampled_from([0.0, 1.0, 1.15, 1.5]),
    bounds_min=st.floats(0.25, 1.0),
    bounds_max=st.floats(1.0, 4.0),
)


@given(
    configs,
    st.floats(1e-6, 1.0),
    st.sampled_from(list(Kind)),
    unit,
    unit,
    st.sampled_from(["hot", "warm", "cool", "cold"]),
    st.lists(st.integers(0, 10**10), max_size=40),
    st.integers(0, 1000),
    st.integers(0, 20),
    st.integers(0, 10**11),
)
def test_final_score_stays_within_bounds_times_fused(
    config, fused, kind, strength, mu, tier, access_ages, extra, sessions, age
) -> None:
    m = memory(
        kind=kind, strength=strength, tier=tier, created_at=NOW - age,
        confidence=replace(Confidence.initial(0.01), mu=mu),
    )  # fmt: skip
    times = tuple(sorted((NOW - a for a in access_ages), reverse=True)[:32])
    history = AccessHistory(times, len(access_ages) + extra)
    s = score(fused, m, history, sessions, NOW, config)
    assert config.bounds_min * fused <= s.final * (1 + 1e-12)
    assert s.final <= config.bounds_max * fused * (1 + 1e-12)
    w = {"actr": config.actr_weight, "strength": config.strength_weight,
         "confidence": config.confidence_weight, "tier": config.tier_weight}  # fmt: skip
    for name, weight in w.items():
        assert 1 - weight - 1e-12 <= s.factors[name] <= 1 + weight + 1e-12, name
    assert 0.5 <= s.factors["kind"] <= 1.5
    assert 1.0 <= s.factors["replication"] <= max(1.0, config.replication_max)


@given(st.floats(-50, 50), st.floats(-50, 50))
def test_actr_factor_is_monotonic_and_bounded(a, b) -> None:
    lo, hi = sorted((a, b))
    assert actr_factor(lo, ACTR_ON) <= actr_factor(hi, ACTR_ON)
    assert 0.9 - 1e-12 <= actr_factor(lo, ACTR_ON) <= 1.1 + 1e-12


@pytest.mark.parametrize(
    ("source", "trust"),
    [
        (Source(), 1.0),
        (Source(session="s", role="user"), 1.0),
        (Source(session="s", role="assistant"), 0.8),
        (Source(session="s", role="tool"), 0.7),
        (Source(url="https://example.org/post"), 0.6),
        (Source(file="/repo/README.md"), 0.95),
        (Source(session="s", via="distiller:model/ollama:m/prompt-1", turns=("t",)), 0.9),
    ],
)
def test_the_provenance_factor_is_the_trust_in_the_source(source: Source, trust: float) -> None:
    assert factors(memory(source=source), None, 1, NOW, DEFAULT)["provenance"] == trust


def test_a_trusted_source_outranks_its_kind_and_an_equal_memory_from_the_web() -> None:
    docs = memory(source=Source(url="https://docs.python.org/3/library/json.html"))
    blog = memory(source=Source(url="https://blog.example/json"))
    assert score(1.0, docs, None, 1, NOW, DEFAULT).final == score(1.0, blog, None, 1, NOW,
                                                                    DEFAULT).final  # fmt: skip
    config = replace(DEFAULT, source_trust=(("url:https://docs.python.org/", 1.1),))
    assert score(1.0, docs, None, 1, NOW, config).final > score(1.0, blog, None, 1, NOW,
                                                                  config).final  # fmt: skip
    assert factors(docs, None, 1, NOW, config)["provenance"] == 1.1


def test_seeds_are_ordered_as_the_scoring_stage_weighs_them() -> None:
    echo = memory(id="echo", source=Source(session="s", role="assistant"))
    turn = memory(id="turn", source=Source(session="s", role="user"))
    later = memory(id="later", source=Source(session="s", role="user"))
    fused = [Fused("echo", 1.0, {}), Fused("turn", 0.9, {}), Fused("gone", 0.85, {}),
             Fused("later", 0.5, {})]  # fmt: skip
    loaded = {m.id: m for m in (echo, turn, later)}
    # 1.0 × 0.8 falls below 0.9 and 0.85 (not loaded: its fused score); 0.5 stays last.
    ordered = by_own_factors(fused, loaded, NOW, DEFAULT)
    assert [f.id for f in ordered] == ["turn", "gone", "echo", "later"]
    assert ordered[0] is fused[1]  # the candidates themselves, scores untouched
    # Equal factors keep the fused order, ties included.
    alike = [Fused("turn", 0.7, {}), Fused("later", 0.7, {})]
    assert by_own_factors(alike, loaded, NOW, DEFAULT) == alike
    trusting = replace(DEFAULT, trust={**DEFAULT.trust, "assistant": 1.0})
    assert by_own_factors(fused, loaded, NOW, trusting) == fused
