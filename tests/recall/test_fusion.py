"""Reciprocal-rank fusion: exact values on a small case, invariants on random ones."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.recall.fusion import rrf


def test_known_values_and_contributions() -> None:
    fused = rrf({"sem": [("a", 0.9), ("b", 0.5)], "kw": [("b", 7.0), ("c", 3.0)]}, k=60)
    assert [f.id for f in fused] == ["b", "a", "c"]
    b = fused[0]
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    assert b.lanes["sem"].rank == 2 and b.lanes["kw"].rank == 1
    assert b.lanes["kw"].raw == 7.0
    assert b.lanes["kw"].contribution == pytest.approx(1 / 61)


def test_weights_scale_a_lane() -> None:
    fused = rrf({"sem": [("a", 1.0)], "kw": [("b", 1.0)]}, weights={"sem": 2.0, "kw": 1.0})
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(2 / 61)


def test_ties_break_by_best_rank_then_id() -> None:
    fused = rrf({"x": [("b", 1.0)], "y": [("a", 1.0)]})
    assert [f.id for f in fused] == ["a", "b"]


def test_repeated_id_within_a_lane_counts_once() -> None:
    fused = rrf({"kw": [("a", 2.0), ("a", 1.0), ("b", 0.5)]})
    assert fused[0].lanes["kw"].rank == 1 and fused[1].lanes["kw"].rank == 2


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        rrf({"kw": []}, k=0)


lanes = st.dictionaries(
    st.sampled_from(["sem", "kw", "tag"]),
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(-10, 10)), max_size=8),
    max_size=3,
)


@given(lanes)
def test_invariants(rankings) -> None:
    fused = rrf(rankings)
    ids = {i for ranking in rankings.values() for i, _ in ranking}
    assert {f.id for f in fused} == ids  # every candidate once, nothing invented
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    for f in fused:
        assert f.score == pytest.approx(sum(h.contribution for h in f.lanes.values()))
        assert 0 < f.score <= len(rankings) / 61


@given(lanes, st.sampled_from("abcdefgh"))
def test_moving_up_in_a_lane_never_lowers_the_score(rankings, target) -> None:
    before = {f.id: f.score for f in rrf(rankings)}
    promoted = {lane: sorted(r, key=lambda item: item[0] != target) for lane, r in rankings.items()}
    after = {f.id: f.score for f in rrf(promoted)}
    if target in before:
        assert after[target] >= before[target] - 1e-12


@given(lanes)
def test_order_of_the_lanes_does_not_matter(rankings) -> None:
    forward = {f.id: f.score for f in rrf(rankings)}
    backward = {f.id: f.score for f in rrf(dict(reversed(list(rankings.items()))))}
    assert forward.keys() == backward.keys()
    assert all(forward[i] == pytest.approx(backward[i]) for i in forward)


@given(lanes, st.sampled_from(["sem", "kw", "tag"]))
def test_ablating_a_lane_removes_exactly_its_contributions(rankings, lane) -> None:
    full = {f.id: f for f in rrf(rankings)}
    ablated = {f.id: f for f in rrf({k: v for k, v in rankings.items() if k != lane})}
    for memory_id, f in full.items():
        rest = f.score - (f.lanes[lane].contribution if lane in f.lanes else 0.0)
        if memory_id in ablated:
            assert ablated[memory_id].score == pytest.approx(rest)
            assert lane not in ablated[memory_id].lanes
        else:
            assert set(f.lanes) == {lane}  # only that lane had found it
