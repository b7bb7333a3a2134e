"""Fusion of ranked lanes: reciprocal-rank fusion (the default) and relative score fusion.

Pure functions: a lane's ranking goes in as an ordered list of ``(id, raw score)``, and every
fused candidate keeps each lane's rank, raw score and contribution (the contributions sum to
its score) so callers can show which lane found what.

- :func:`rrf` (Cormack, Clarke & Büttcher, SIGIR 2009): ``sum over lanes of weight / (k +
  rank)`` with ranks starting at 1.
- :func:`rsf`: relative score fusion — CombSUM of min-max normalised scores (Fox & Shaw,
  TREC-2 1994; normalisation as in Lee, SIGIR 1997) with seed 001's hybrid weighting:
  semantic 0.6, BM25 0.4, a tag match adds 0.05, all times ``0.5 + 0.5 x confidence``
  (the weights, a floor under each lane's span and the confidence factor are parameters).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

RRF_K = 60
#: Seed 001, The Resonance Engine, "BM25 Hybrid": semantic_weight 0.6, bm25_weight 0.4.
RSF_WEIGHTS: Mapping[str, float] = MappingProxyType({"sem": 0.6, "kw": 0.4})
#: The floor under a lane's span that the pipeline's rsf uses, as a share of the lane's best
#: score (:func:`rsf`'s ``min_span``; RecallConfig.rsf_min_span).
RSF_MIN_SPAN = 0.5
#: Seed 001: tag_boost 0.05, added once for a memory the tag lane found.
RSF_BOOSTS: Mapping[str, float] = MappingProxyType({"tag": 0.05})


@dataclass(frozen=True, slots=True)
class LaneHit:
    """One lane's view of a candidate: its rank there (1 = best), raw score, RRF share."""

    rank: int
    raw: float
    contribution: float


@dataclass(frozen=True, slots=True)
class Fused:
    """A candidate after fusion: the summed score and each lane's part in it."""

    id: str
    score: float
    lanes: Mapping[str, LaneHit]


def rrf(
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Fuse lane rankings; best first, ties broken by best single rank, then by id.

    A lane missing from ``weights`` weighs 1. An id repeated within one lane counts at its
    first (best) rank only.
    """
    if k <= 0:
        raise ValueError("RRF k must be positive")
    scores: dict[str, float] = {}
    parts: dict[str, dict[str, LaneHit]] = {}
    for lane, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(lane, 1.0)
        rank = 0
        for memory_id, raw in ranking:
            hits = parts.setdefault(memory_id, {})
            if lane in hits:
                continue
            rank += 1
            share = weight / (k + rank)
            hits[lane] = LaneHit(rank=rank, raw=raw, contribution=share)
            scores[memory_id] = scores.get(memory_id, 0.0) + share
    best_rank = {mid: min(h.rank for h in hits.values()) for mid, hits in parts.items()}
    order = sorted(scores, key=lambda mid: (-scores[mid], best_rank[mid], mid))
    return [Fused(id=mid, score=scores[mid], lanes=parts[mid]) for mid in order]


def rsf(
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    *,
    weights: Mapping[str, float] = RSF_WEIGHTS,
    boosts: Mapping[str, float] = RSF_BOOSTS,
    confidence: Mapping[str, float] | None = None,
    min_span: float = 0.0,
) -> list[Fused]:
    """Relative score fusion; best first, ties broken by best single rank, then by id.

    Each lane's raw scores are min-max normalised over that lane's list (its best 1, its
    worst 0; a list of equal scores gives each 1). With ``min_span`` > 0 the span is at least
    ``min_span × |best|`` below the best: a short or flat list (a small realm's two memories
    of cosine 0.75 and 0.70) is not stretched to 1 and 0 (with 0.5, 1 and 0.87), so the scoring
    stage's bounded factors can still order what is about equally relevant. A lane in
    ``boosts`` adds its constant to every memory it found; any other lane adds ``weight x
    normalised score`` (a lane in neither mapping weighs 1). The sum is multiplied by
    ``0.5 + 0.5 x confidence`` of the memory (``confidence`` maps ids to [0, 1]; an id missing
    from it keeps factor 1). An id repeated within one lane counts at its first (best) rank
    only.
    """
    confidence = confidence or {}
    parts: dict[str, dict[str, tuple[int, float, float]]] = {}
    for lane, ranking in rankings.items():
        first: dict[str, tuple[int, float]] = {}
        for memory_id, raw in ranking:
            if memory_id not in first:
                first[memory_id] = (len(first) + 1, raw)
        if not first:
            continue
        top = max(raw for _, raw in first.values())
        span = max(top - min(raw for _, raw in first.values()), min_span * abs(top))
        for memory_id, (rank, raw) in first.items():
            if lane in boosts:
                share = boosts[lane]
            else:
                # From the top down: the best is 1 and the worst 0 exactly (no rounding below).
                normalised = 1.0 - (top - raw) / span if span > 0 else 1.0
                share = weights.get(lane, 1.0) * normalised
            parts.setdefault(memory_id, {})[lane] = (rank, raw, share)
    fused: list[Fused] = []
    for memory_id, lanes in parts.items():
        factor = 0.5 + 0.5 * confidence[memory_id] if memory_id in confidence else 1.0
        hits = {
            lane: LaneHit(rank=rank, raw=raw, contribution=share * factor)
            for lane, (rank, raw, share) in lanes.items()
        }
        fused.append(Fused(memory_id, sum(h.contribution for h in hits.values()), hits))
    fused.sort(key=lambda f: (-f.score, min(h.rank for h in f.lanes.values()), f.id))
    return fused
