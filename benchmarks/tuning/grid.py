"""Tuning aid (issue 19's rule): many recall configs over both development sets' halves, each
set's stores built once. Not part of chitta; prints recall@10 and nDCG@10 per set and config,
and the sum over both sets that the tuning rule compares.

    python benchmarks/tuning/grid.py tune configs.json out.json [--vector-cache DIR]

``configs.json`` maps a name to changes of ``hybrid``: ``{"lanes": {...}}`` for the lane
weights, any other RecallConfig field by name (``{"rrf_k": 30}``, ``{"common_fraction": null}``,
``{"fusion": "rsf", "rsf_lanes": {"sem": 0.5, "kw": 0.5}}``), and ``{"scoring": {...}}`` for
ScoringConfig fields, the scoring stage's and inhibition's (``{"scoring":
{"inhibition_threshold": 0.6}}``; ``trust`` is merged into the default trust per source kind).
The final figures of a decision come from ``chitta bench locomo`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import chitta.recall.config as recall_config
from chitta.bench import locomo
from chitta.bench.devsets import bench_embedder, loaded_sets
from chitta.bench.runner import realm_for
from chitta.bench.score import score, summary
from chitta.bench.systems.chitta import ChittaStore
from chitta.recall.scoring_config import DEFAULT as DEFAULT_SCORING
from chitta.recall.scoring_config import ScoringConfig


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("half", choices=("tune", "held-out"))
    args.add_argument("configs", type=Path)
    args.add_argument("out", type=Path)
    args.add_argument("--vector-cache", type=Path)
    opts = args.parse_args()
    configs = json.loads(opts.configs.read_text())
    base = recall_config.PRESETS["hybrid"]
    presets = dict(recall_config.PRESETS)
    for name, spec in configs.items():
        weights = spec.get("lanes", dict(base.lane_weights))
        extra = {k: v for k, v in spec.items() if k not in ("lanes", "scoring")}
        presets[name] = replace(base, name=name, lane_weights=MappingProxyType(weights), **extra)
    recall_config.PRESETS = MappingProxyType(presets)  # preset() reads the module's global
    results: dict[str, dict] = {}
    for set_name, data, store in loaded_sets(opts.half, bench_embedder(opts.vector_cache)):
        for name in configs:
            scoring = _scoring(configs[name].get("scoring", {}))
            results.setdefault(name, {})[set_name] = _measure(store, data, name, scoring)
            figures = results[name][set_name]
            print(set_name, name, figures, flush=True)
    opts.out.write_text(json.dumps(results, indent=1))
    for name, per_set in results.items():
        total = sum(f["recall@10"] + f["ndcg@10"] for f in per_set.values())
        sets = " ".join(f"{s}:{f['recall@10']:.4f}/{f['ndcg@10']:.4f}" for s, f in per_set.items())
        print(f"{name:28s} sum={total:.4f} {sets}")


def _scoring(changes: dict) -> ScoringConfig:
    """The default scoring config with ``changes`` (``trust``: merged into the default's)."""
    if "trust" in changes:
        changes = {**changes, "trust": MappingProxyType({**DEFAULT_SCORING.trust,
                                                         **changes["trust"]})}  # fmt: skip
    return replace(DEFAULT_SCORING, **changes)


def _measure(
    store: ChittaStore, data: locomo.Dataset, strategy: str, scoring: ScoringConfig
) -> dict:
    chitta = store.open()
    chitta.scoring = scoring  # the store is opened once and shared by every config
    rows = []
    start = time.perf_counter()
    for conv in data.conversations:
        realm = realm_for(conv.sample_id)
        for q in conv.questions:
            if not q.gold:
                continue
            result = chitta.recall(q.question, realm=realm, limit=20, strategy=strategy,
                                   record=False, now=q.now_ms)  # fmt: skip
            rows.append((q.category, score([store.turn_of[h.memory.id] for h in result.hits],
                                           q.gold)))  # fmt: skip
    out = summary(rows)
    out["s"] = round(time.perf_counter() - start, 1)
    return out


if __name__ == "__main__":
    main()
