"""Retrieval metrics over ranked turn ids, and their averages per category. Pure functions.

recall@k is the fraction of a question's gold turns in the top k; hit@k is 1 if any is;
nDCG@10 uses binary gain (Järvelin & Kekäläinen 2002); MRR is 1 / rank of the first gold
turn. Questions without gold turns are not scored (they are counted).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence

KS = (5, 10, 20)
METRICS = ("recall@5", "recall@10", "recall@20", "hit@5", "hit@10", "hit@20", "ndcg@10", "mrr")


def recall_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return len(gold.intersection(ranked[:k])) / len(gold) if gold else 0.0


def hit_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return 1.0 if gold.intersection(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: set[str]) -> float:
    for i, doc in enumerate(ranked):
        if doc in gold:
            return 1.0 / (i + 1)
    return 0.0


def score(ranked: Sequence[str], gold: Iterable[str]) -> dict[str, float]:
    """Every metric of one question. Repeated ids in ``ranked`` count once, at the first."""
    ranked = list(dict.fromkeys(ranked))
    want = set(gold)
    out = {f"recall@{k}": recall_at(ranked, want, k) for k in KS}
    out.update({f"hit@{k}": hit_at(ranked, want, k) for k in KS})
    out["ndcg@10"] = ndcg_at(ranked, want, 10)
    out["mrr"] = reciprocal_rank(ranked, want)
    return out


def aggregate(
    rows: Iterable[tuple[int, Mapping[str, float]]],
    groups: Mapping[str, Collection[int]] | None = None,
) -> dict[str, dict[str, float]]:
    """Mean of each metric per category (``"1"``…), over each of the dataset's ``groups`` of
    categories (LoCoMo's ``{"1-4": (1, 2, 3, 4)}``) and overall (``"all"``), with the question
    count ``n`` of each."""
    extra = groups or {}
    members: dict[str, list[Mapping[str, float]]] = {}
    for category, metrics in rows:
        keys = [str(category), "all"] + [g for g, codes in extra.items() if category in codes]
        for key in keys:
            members.setdefault(key, []).append(metrics)
    out: dict[str, dict[str, float]] = {}
    for key, items in members.items():
        out[key] = {m: sum(x[m] for x in items) / len(items) for m in METRICS}
        out[key]["n"] = len(items)
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0 for no values."""
    if not values:
        return 0.0
    data = sorted(values)
    pos = (len(data) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    return data[low] + (data[high] - data[low]) * (pos - low)


def summary_ms(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean / min / max of millisecond figures, rounded to µs."""
    if not values:
        return {"p50": 0.0, "p95": 0.0, "mean": 0.0, "min": 0.0, "max": 0.0}
    return {
        "p50": round(percentile(values, 50), 3),
        "p95": round(percentile(values, 95), 3),
        "mean": round(statistics.fmean(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def summary(rows: Sequence[tuple[int, Mapping[str, float]]]) -> dict:
    """Mean recall@10 and nDCG@10 of ``rows`` ((category, :func:`score`)), rounded to 4
    places, and ``by_type``: each category's pair, rounded to 3 (the tuning aids' figures)."""
    metrics = ("recall@10", "ndcg@10")
    out: dict = {m: round(sum(r[m] for _, r in rows) / len(rows), 4) for m in metrics}
    by_type: dict[int, list[Mapping[str, float]]] = {}
    for category, scored in rows:
        by_type.setdefault(category, []).append(scored)
    out["by_type"] = {c: [round(sum(r[m] for r in v) / len(v), 3) for m in metrics]
                      for c, v in sorted(by_type.items())}  # fmt: skip
    return out
