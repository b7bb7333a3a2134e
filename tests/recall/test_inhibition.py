"""Lateral inhibition: the exact penalty, reordering of near-duplicates, and its invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.recall.inhibition import inhibit, penalty


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_penalty_is_zero_at_the_threshold_and_strength_for_a_copy() -> None:
    assert penalty(0.85, 0.85, 0.7) == 1.0
    assert penalty(0.5, 0.85, 0.7) == 1.0
    assert penalty(1.0, 0.85, 0.7) == pytest.approx(0.3)
    assert penalty(0.925, 0.85, 0.7) == pytest.approx(1 - 0.7 * 0.5)


def test_a_near_duplicate_sinks_below_a_distinct_candidate() -> None:
    a = unit(1, 0, 0)
    a_copy = unit(1, 0.05, 0)  # cosine 0.9988 to a
    b = unit(0, 1, 0)
    result = inhibit([1.0, 0.9, 0.5], [a, a_copy, b], threshold=0.85, strength=0.7)
    assert result.order == (0, 2, 1)
    assert result.multipliers[0] == 1.0 and result.multipliers[2] == 1.0
    assert result.multipliers[1] == pytest.approx(penalty(float(a @ a_copy), 0.85, 0.7))
    assert result.scores[1] == pytest.approx(0.9 * result.multipliers[1])


def test_distinct_candidates_and_missing_vectors_keep_their_order() -> None:
    vectors = [unit(1, 0, 0), None, unit(0, 1, 0), unit(0, 0, 1)]
    result = inhibit([0.4, 0.3, 0.3, 0.1], vectors, threshold=0.85, strength=0.7)
    assert result.order == (0, 1, 2, 3)  # a tie keeps the input order
    assert result.multipliers == (1.0, 1.0, 1.0, 1.0)
    assert inhibit([], [], threshold=0.85, strength=0.7).order == ()


def test_strength_zero_changes_nothing() -> None:
    a = unit(1, 0)
    result = inhibit([1.0, 0.9], [a, a], threshold=0.85, strength=0.0)
    assert result.order == (0, 1) and result.scores == (1.0, 0.9)


vectors = st.lists(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3).filter(
        lambda v: np.linalg.norm(v) > 1e-3
    ),
    min_size=1,
    max_size=12,
)


@given(vectors, st.floats(0.5, 0.99), st.floats(0.0, 1.0), st.data())
def test_invariants(vs, threshold, strength, data) -> None:
    scores = sorted(
        data.draw(st.lists(st.floats(1e-4, 1.0), min_size=len(vs), max_size=len(vs))),
        reverse=True,
    )
    result = inhibit(scores, [np.array(v) for v in vs], threshold=threshold, strength=strength)
    assert sorted(result.order) == list(range(len(vs)))  # a permutation: nothing dropped
    assert result.order[0] == 0  # the strongest is never inhibited
    for i, s in enumerate(scores):
        assert 1 - strength - 1e-9 <= result.multipliers[i] <= 1.0
        assert result.scores[i] == pytest.approx(s * result.multipliers[i])
    ordered = [result.scores[i] for i in result.order]
    assert ordered == sorted(ordered, reverse=True)  # the new order follows the new scores
