"""The recall phase (a worker): first recall after open, then the three strategies, timed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chitta.bench.scale.events import Events
from chitta.bench.scale.lane_phase import lane_figures
from chitta.bench.scale.measure import load_model, memory_mb, reset_peak, settings_of, timed
from chitta.bench.scale.settings import LIMIT, MB, REALM, STRATEGIES, BenchFailed
from chitta.bench.score import percentile, summary_ms


@dataclass(slots=True)
class _Samples:
    """One strategy's figures over the queries: wall ms, each timing part in ms, hits."""

    walls: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=dict)
    hits: int = 0

    def add(self, seconds: float, result: Any) -> None:
        self.walls.append(seconds * 1000)
        self.hits += len(result.hits)
        timing = dict(result.timing_ms)
        lanes = sum(v for k, v in timing.items() if k != "total")
        timing["load_hits"] = round(timing["total"] - lanes, 3)  # get_many + filter
        timing["api"] = round(seconds * 1000 - timing["total"], 3)  # validation etc.
        for key, value in timing.items():
            self.parts.setdefault(key, []).append(value)

    def figures(self, queries: int, cache: Any) -> dict[str, Any]:
        p = self.parts
        return {
            "wall_ms": summary_ms(self.walls),
            "timing_ms_p50": {k: round(percentile(v, 50), 3) for k, v in p.items()},
            "timing_ms_p95": {k: round(percentile(v, 95), 3) for k, v in p.items()},
            "mean_hits": round(self.hits / max(1, queries), 2),
            "embed_cache": cache.stats(),
        }


def _time_queries(
    chitta: Any, caches: dict[str, Any], queries: list[str], events: Events
) -> dict[str, _Samples]:
    """Every query with every strategy, in rotating order, each strategy on its own cache."""
    samples = {s: _Samples() for s in STRATEGIES}
    for i, q in enumerate(queries):
        for strategy in STRATEGIES[i % 3 :] + STRATEGIES[: i % 3]:
            chitta.embedder = caches[strategy]
            seconds, result = timed(
                lambda q=q, s=strategy: chitta.recall(q, realm=REALM, limit=LIMIT, strategy=s)
            )
            samples[strategy].add(seconds, result)
        events.advance(1)
    return samples


def _reopen(spec: dict[str, Any], inner: Any) -> dict[str, float]:
    """Open the store again (the vector index now comes from the HNSW sidecar written by
    the first open, if the store has a graph) and time the first recall."""
    from chitta.api import Chitta
    from chitta.embed.cache import CachedEmbedder

    open_s, chitta = timed(
        lambda: Chitta.open(settings_of(spec), embedder=CachedEmbedder(inner), through_daemon=False)
    )
    try:
        first_s, _ = timed(
            lambda: chitta.recall(spec["warmup"], realm=REALM, limit=LIMIT, strategy="hybrid")
        )
    finally:
        chitta.close()
    return {"open_ms": round(open_s * 1000, 3), "first_recall_ms": round(first_s * 1000, 3)}


def recall_figures(spec: dict[str, Any], events: Events) -> dict[str, Any]:
    """Open the store anew, time the first recall (index load), warm the store as a daemon
    does after it starts (store/base.py ``warm``: what the first recall did not build, such as
    the common words' doclists), then the three strategies.

    The strategies are interleaved query by query, in rotating order, so the machine's noise
    falls on all three alike; each has its own cold cache, so every query is embedded.
    """
    from chitta.api import Chitta
    from chitta.embed.cache import CachedEmbedder

    rss: dict[str, Any] = {"start": memory_mb()}
    _, inner = load_model()
    rss["model_loaded"] = memory_mb()
    rss["peak_reset"] = reset_peak()
    queries: list[str] = spec["queries"]
    events.task(f"N={spec['n']:,}: recall ({len(queries)} queries × 3 strategies)",
                1 + len(queries))  # fmt: skip
    open_s, chitta = timed(
        lambda: Chitta.open(settings_of(spec), embedder=CachedEmbedder(inner), through_daemon=False)
    )
    try:
        first_s, first = timed(
            lambda: chitta.recall(spec["warmup"], realm=REALM, limit=LIMIT, strategy="hybrid")
        )
        rss["after_first_recall"] = memory_mb()
        warm_s, warm_parts = timed(chitta.store.warm)
        rss["after_warm_up"] = memory_mb()
        events.advance(1)
        caches = {s: CachedEmbedder(inner) for s in STRATEGIES}
        samples = _time_queries(chitta, caches, queries, events)
        rss["after_queries"] = memory_mb()
        out: dict[str, Any] = {
            "queries": len(queries),
            "open_ms": round(open_s * 1000, 3),
            "first_recall_ms": round(first_s * 1000, 3),
            "first_recall_timing_ms": first.timing_ms,
            "warm_up_ms": {"total": round(warm_s * 1000, 1), **warm_parts},
            "vectors_in_index": chitta.store.vector_count(),
        }
        for strategy in STRATEGIES:
            cache = caches[strategy]
            if cache.hits:
                raise BenchFailed(f"{strategy}: the embedding cache was hit ({cache.stats()})")
            out[strategy] = samples[strategy].figures(len(queries), cache)
        out["lanes"] = lane_figures(chitta, inner, queries)
    finally:
        chitta.close()
    out["reopen"] = _reopen(spec, inner)
    dim = inner.identity().dim
    rss["vector_matrix_mb"] = round(out["vectors_in_index"] * dim * 4 / MB, 1)
    rss["index_delta"] = round(rss["after_first_recall"]["rss"] - rss["model_loaded"]["rss"], 1)
    out["rss_mb"] = rss
    return out
