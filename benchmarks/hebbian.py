"""Does Hebbian co-access pay? (issue 21, part 3) A simulated agent that uses what it recalls.

    python benchmarks/hebbian.py OUT.json [--half tune|held-out] [--vector-cache DIR]

For each development set's half, each conversation's questions are asked in the file's order
against one store. After each recall, the gold memories among its top 10 stand for what a
diligent agent's answer drew on (recall/usage.py): when there are two or more, every pair is
linked exactly as ``session_used`` links them (0.03 per answer, at most 5 memories). With a
share of wrong feedback, that share of the answers names two random non-gold hits instead.
Each question is scored with the links of the questions before it only, against the same
questions on the same store with no links, for the strategies whose graph lane reads them.

Not part of chitta; the figures and the decision are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import random
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
from chitta.recall.scoring_config import DEFAULT as SCORING
from chitta.store.access import AccessRecord

#: (name, share of wrong feedback); None: no feedback at all.
CONDITIONS = (("none", None), ("used", 0.0), ("used, 20 % wrong", 0.2))


def _strategies() -> list[str]:
    """hybrid with the graph lane added (at the RRF weight field gives it, 0.5, and the rsf
    weight of hybrid's other added lanes, 0.4 × that), and field."""
    base = recall_config.PRESETS["hybrid"]
    lanes = {**base.lane_weights, "graph": 0.5}
    rsf = {**base.rsf_lanes, "graph": 0.2}
    plus = replace(base, name="hybrid+graph", lane_weights=MappingProxyType(lanes),
                   rsf_lanes=MappingProxyType(rsf))  # fmt: skip
    recall_config.PRESETS = MappingProxyType({**recall_config.PRESETS, plus.name: plus})
    return ["hybrid", plus.name, "field"]


def _unlink(store: ChittaStore) -> None:
    """Drop every co-access link (the benchmark's stores are SQLite files of its own)."""
    chitta = store.open()
    chitta.store.flush_access()
    with chitta.store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("DELETE FROM co_access")


def _run(store: ChittaStore, data: locomo.Dataset, strategy: str, wrong: float | None) -> dict:
    _unlink(store)
    chitta = store.open()
    rng = random.Random(21)
    rows, links, start = [], 0, time.perf_counter()
    for conv in data.conversations:
        realm = realm_for(conv.sample_id)
        for q in conv.questions:
            if not q.gold:
                continue
            result = chitta.recall(q.question, realm=realm, limit=10, strategy=strategy,
                                   record=False, now=q.now_ms)  # fmt: skip
            ids = [h.memory.id for h in result.hits]
            rows.append((q.category, score([store.turn_of[i] for i in ids], q.gold)))
            if wrong is None:
                continue
            used = [i for i in ids if store.turn_of[i] in q.gold][: SCORING.hebbian_top]
            others = [i for i in ids if i not in used]
            if used and rng.random() < wrong and len(others) >= 2:
                used = rng.sample(others, 2)
            if len(used) >= 2:
                at = q.now_ms or int(time.time() * 1000)  # the recall's "now" is the clock's
                chitta.store.record_access(AccessRecord((), at, tuple(used), SCORING.hebbian_step))
                links += 1
    out = summary(rows)
    out["answers_linking"] = links
    out["s"] = round(time.perf_counter() - start, 1)
    return out


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("out", type=Path)
    args.add_argument("--half", choices=("tune", "held-out"), default="tune")
    args.add_argument("--vector-cache", type=Path)
    opts = args.parse_args()
    strategies = _strategies()
    results: dict[str, dict] = {"half": opts.half}
    for set_name, data, store in loaded_sets(opts.half, bench_embedder(opts.vector_cache)):
        for strategy in strategies:
            for condition, wrong in CONDITIONS:
                if strategy == "hybrid" and wrong is not None:
                    continue  # hybrid has no graph lane: links cannot change it
                figures = _run(store, data, strategy, wrong)
                results.setdefault(set_name, {}).setdefault(strategy, {})[condition] = figures
                print(set_name, strategy, condition, figures, flush=True)
    opts.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
