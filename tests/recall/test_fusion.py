"""Reciprocal-rank fusion: exact values on a small case, invariants on random ones."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.recall.fusion import rrf, rsf


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


# --- relative score fusion ---------------------------------------------------------------------


def test_rsf_known_values_with_the_seed_weighting() -> None:
    fused = rsf(
        {
            "sem": [("a", 0.9), ("b", 0.5), ("c", 0.1)],
            "kw": [("b", 12.0), ("c", 2.0)],
            "tag": [("c", 1.0)],
        },
        confidence={"a": 0.7, "b": 0.7, "c": 1.0},
    )
    factor = 0.5 + 0.5 * 0.7
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(0.6 * 1.0 * factor)  # sem best: normalised 1
    assert scores["b"] == pytest.approx((0.6 * 0.5 + 0.4 * 1.0) * factor)
    assert scores["c"] == pytest.approx(0.0 + 0.0 + 0.05)  # worst in both lanes, tag boost
    assert [f.id for f in fused] == ["b", "a", "c"]
    b = fused[0]
    assert b.lanes["kw"].rank == 1 and b.lanes["kw"].raw == 12.0
    assert b.lanes["kw"].contribution == pytest.approx(0.4 * factor)
    assert fused[2].lanes["tag"].contribution == pytest.approx(0.05)


def test_rsf_single_score_lists_and_missing_confidence() -> None:
    fused = rsf({"sem": [("a", 0.3)], "kw": [("b", 5.0), ("b", 9.0)]})
    assert {f.id: f.score for f in fused} == {"a": pytest.approx(0.6), "b": pytest.approx(0.4)}
    assert rsf({"sem": []}) == []


def test_rsf_min_span_keeps_a_short_list_from_being_stretched() -> None:
    pair = {"sem": [("a", 0.75), ("b", 0.70)]}
    assert {f.id: f.score for f in rsf(pair)} == {"a": 0.6, "b": 0.0}
    spanned = {f.id: f.score for f in rsf(pair, min_span=0.25)}
    assert spanned["a"] == pytest.approx(0.6)
    assert spanned["b"] == pytest.approx(0.6 * (1 - 0.05 / (0.25 * 0.75)))  # 1 and 0.73
    # A list spread wider than the floor is min-max normalised as before.
    wide = {"sem": [("a", 0.9), ("b", 0.3), ("c", 0.1)]}
    assert [f.score for f in rsf(wide, min_span=0.25)] == [f.score for f in rsf(wide)]


def test_rsf_weights_and_boosts_are_parameters() -> None:
    fused = rsf({"x": [("a", 2.0), ("b", 1.0)], "y": [("b", 1.0)]}, weights={"x": 2.0},
                boosts={"y": 0.5})  # fmt: skip
    assert {f.id: f.score for f in fused} == {"a": pytest.approx(2.0), "b": pytest.approx(0.5)}


confidences = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1))


@given(lanes, confidences, st.sampled_from([0.0, 0.25, 1.0]))
def test_rsf_invariants(rankings, confidence, min_span) -> None:
    fused = rsf(rankings, confidence=confidence, min_span=min_span)
    ids = {i for ranking in rankings.values() for i, _ in ranking}
    assert {f.id for f in fused} == ids
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    for f in fused:
        assert f.score == pytest.approx(sum(h.contribution for h in f.lanes.values()))
        assert 0 <= f.score <= 0.6 + 0.4 + 0.05 + 1e-9


@given(lanes, confidences, st.sampled_from(["sem", "kw", "tag"]))
def test_rsf_ablating_a_lane_leaves_the_other_lanes_shares(rankings, confidence, lane) -> None:
    full = {f.id: f for f in rsf(rankings, confidence=confidence)}
    ablated = rsf({k: v for k, v in rankings.items() if k != lane}, confidence=confidence)
    for f in ablated:
        for name, hit in f.lanes.items():
            assert hit.contribution == pytest.approx(full[f.id].lanes[name].contribution)
