"""Reciprocal-rank fusion of ranked lanes (Cormack, Clarke & Büttcher, SIGIR 2009).

Pure functions: a lane's ranking goes in as an ordered list of ``(id, raw score)``; each id
gets ``sum over lanes of weight / (k + rank)`` with ranks starting at 1, and keeps every
lane's rank, raw score and contribution so callers can show which lane found what.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RRF_K = 60


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
