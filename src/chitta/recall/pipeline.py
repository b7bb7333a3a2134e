"""The recall pipeline: run the configured lanes over a scope, fuse, load the winners."""

from __future__ import annotations

import time
from dataclasses import dataclass

from chitta.embed.base import Embedder
from chitta.errors import BadArgument
from chitta.recall.config import MAX_LIMIT, RecallConfig
from chitta.recall.fusion import LaneHit, rrf
from chitta.recall.lanes import LANES, LaneContext
from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory, its fused score, and each lane that found it."""

    memory: Memory
    score: float
    lanes: dict[str, LaneHit]


@dataclass(frozen=True, slots=True)
class RecallResult:
    """A recall's ranked hits and how it was made (no stored text beyond the hits)."""

    query: str
    strategy: str
    scope: Scope
    hits: tuple[Hit, ...]
    lanes_run: tuple[str, ...]
    candidates: int
    timing_ms: dict[str, float]


def recall(
    store: Store,
    embedder: Embedder,
    query: str,
    scope: Scope,
    *,
    limit: int,
    config: RecallConfig,
    include_superseded: bool = False,
) -> RecallResult:
    """The ``limit`` best memories in ``scope`` for ``query`` under ``config``.

    A memory another one supersedes is left out unless ``include_superseded``.
    """
    if not query.strip():
        raise BadArgument("query is empty")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    timing: dict[str, float] = {}
    start = time.perf_counter()
    lanes = [LANES[name] for name in config.lane_weights if name in LANES]
    vector = None
    if any(lane.name == "sem" for lane in lanes):
        vector = embedder.embed([query]).vectors[0]
        timing["embed"] = _ms_since(start)
    ctx = LaneContext(query, vector, scope, config.depth(limit), store)
    rankings = {}
    for lane in lanes:
        t = time.perf_counter()
        rankings[lane.name] = lane.run(ctx)
        timing[lane.name] = _ms_since(t)
    t = time.perf_counter()
    fused = rrf(rankings, k=config.rrf_k, weights=config.lane_weights)
    timing["fuse"] = _ms_since(t)
    hits: list[Hit] = []
    for offset in range(0, len(fused), limit * 2):
        chunk = fused[offset : offset + limit * 2]
        memories = store.get_many([f.id for f in chunk])
        for f in chunk:
            m = memories.get(f.id)
            if m is not None and (include_superseded or m.superseded_by is None):
                hits.append(Hit(memory=m, score=f.score, lanes=dict(f.lanes)))
        if len(hits) >= limit:
            break
    timing["total"] = _ms_since(start)
    return RecallResult(
        query=query,
        strategy=config.name,
        scope=scope,
        hits=tuple(hits[:limit]),
        lanes_run=tuple(lane.name for lane in lanes),
        candidates=len(fused),
        timing_ms=timing,
    )


def _ms_since(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 3)
