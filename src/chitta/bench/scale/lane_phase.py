"""Every recall lane timed on its own, and the `sem` lane's HNSW graph against exact search.

Part of the recall phase. Each query is planned and embedded as the hybrid preset's pipeline
does it (recall/pipeline.py), then every lane of the registry (:data:`LANES`, so lanes added
later are timed too) runs alone on the same context, in rotating order; the derived lanes
(ctx, common, graph) run last, seeded as in the hybrid pipeline with the fusion of its first
lanes' rankings (the fusion's time is not theirs). The `sem` lane's
answer is compared with exact search over the same scope: recall@10 of the lane against the
exact top 10, and the exact search's own time.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from chitta.bench.scale.settings import LIMIT, REALM
from chitta.bench.score import percentile
from chitta.recall.config import preset
from chitta.recall.lanes import LANES, LaneContext
from chitta.recall.pipeline import seeds_of
from chitta.recall.query import plan_query
from chitta.store.records import Scope


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


def _p(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def lane_figures(chitta: Any, embedder: Any, queries: list[str]) -> dict[str, Any]:
    """p50 / p95 ms of planning, embedding, each lane alone and exact vector search, and the
    `sem` lane's recall@10 against exact search."""
    store, scope = chitta.store, Scope(REALM)
    config = preset("hybrid")
    times: dict[str, list[float]] = {"plan": [], "embed": [], "sem_exact": []}
    times.update({name: [] for name in LANES})
    overlap: list[float] = []
    names = [name for name, lane in LANES.items() if not lane.derived]
    derived = [name for name, lane in LANES.items() if lane.derived]
    for i, query in enumerate(queries):
        t = time.perf_counter()
        stats = store.term_stats()
        plan = plan_query(
            query, partial(stats.df, REALM), stats.size(REALM), config.common_fraction
        )
        times["plan"].append(_ms(t))
        t = time.perf_counter()
        vector = embedder.embed([plan.embed_text]).vectors[0]
        times["embed"].append(_ms(t))
        ctx = LaneContext(query, plan.terms, vector, scope, config.depth(LIMIT), store,
                          common=plan.common)  # fmt: skip
        rankings = {}
        for name in names[i % len(names) :] + names[: i % len(names)]:
            t = time.perf_counter()
            rankings[name] = LANES[name].run(ctx)
            times[name].append(_ms(t))
        hybrid = {n: r for n, r in rankings.items() if n in config.lane_weights}
        seeded = ctx.with_seeds(seeds_of(config, hybrid, ctx))
        for name in derived:
            t = time.perf_counter()
            LANES[name].run(seeded)
            times[name].append(_ms(t))
        t = time.perf_counter()
        exact = store.vector_search(vector, scope, ctx.depth, exact=True)
        times["sem_exact"].append(_ms(t))
        got = {m for m, _ in store.vector_search(vector, scope, ctx.depth)[:LIMIT]}
        truth = [m for m, _ in exact[:LIMIT]]
        if truth:
            overlap.append(len(got.intersection(truth)) / len(truth))
    return {
        "lanes": sorted(LANES),
        "timing_ms": {name: _p(v) for name, v in times.items() if v},
        "sem_uses_hnsw": store.vector_search_is_approximate(REALM),
        "sem_recall_at_10_vs_exact": round(sum(overlap) / max(1, len(overlap)), 4),
    }
