"""The scorer: a perfect retriever scores 1, a random one scores chance, known values hold."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.bench.score import METRICS, aggregate, percentile, score, summary


def test_perfect_retriever_scores_one() -> None:
    gold = ["D1:3", "D2:7"]
    metrics = score(gold + ["D9:9"], gold)
    assert all(metrics[m] == 1.0 for m in METRICS)


def test_known_values() -> None:
    ranked = ["a", "x", "b", "y", "z", "c"]
    m = score(ranked, ["b", "c", "q"])
    assert m["recall@5"] == pytest.approx(1 / 3)
    assert m["recall@10"] == pytest.approx(2 / 3)
    assert m["hit@5"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 3)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg@10"] == pytest.approx((1 / math.log2(4) + 1 / math.log2(7)) / ideal)


def test_nothing_found_scores_zero_and_duplicates_count_once() -> None:
    assert all(v == 0.0 for v in score(["x", "y"], ["a"]).values())
    assert score(["x", "x", "x", "x", "x", "a"], ["a"])["recall@5"] == 1.0


def test_random_retriever_scores_near_chance() -> None:
    rng = random.Random(1)
    docs = [f"D{i}" for i in range(500)]
    rows = []
    for _ in range(400):
        gold = rng.sample(docs, rng.randint(1, 3))
        ranked = rng.sample(docs, 20)
        rows.append((4, score(ranked, gold)))
    means = aggregate(rows)["all"]
    assert means["recall@10"] == pytest.approx(10 / 500, abs=0.012)
    assert means["recall@20"] == pytest.approx(20 / 500, abs=0.015)


def test_aggregate_groups() -> None:
    rows = [(1, score(["a"], ["a"])), (5, score(["b"], ["a"])), (4, score(["a"], ["a"]))]
    agg = aggregate(rows, {"1-4": (1, 2, 3, 4)})  # LoCoMo's group
    assert agg["1"]["recall@10"] == 1.0 and agg["5"]["recall@10"] == 0.0
    assert agg["1-4"]["n"] == 2 and agg["all"]["n"] == 3
    assert agg["all"]["recall@10"] == pytest.approx(2 / 3)
    assert set(aggregate(rows)) == {"1", "4", "5", "all"}  # groups are the dataset's to name


@given(st.lists(st.sampled_from("abcdefghij"), max_size=20),
       st.sets(st.sampled_from("abcdefghij"), min_size=1))  # fmt: skip
def test_metrics_are_bounded_and_monotone_in_k(ranked, gold) -> None:
    m = score(ranked, gold)
    assert all(0.0 <= v <= 1.0 for v in m.values())
    assert m["recall@5"] <= m["recall@10"] <= m["recall@20"]
    assert m["hit@5"] <= m["hit@10"] <= m["hit@20"]


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0], 95) == pytest.approx(1.95)


def test_summary_means_and_per_category_pairs() -> None:
    rows = [(1, score(["a", "b"], ["a"])), (1, score(["b"], ["a"])), (2, score(["c", "a"], ["a"]))]
    out = summary(rows)
    assert out["recall@10"] == round(2 / 3, 4)
    assert out["by_type"] == {1: [0.5, 0.5], 2: [1.0, round(1 / math.log2(3), 3)]}
