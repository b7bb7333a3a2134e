"""A store opened again, as a restarted daemon opens it: the first recall's time and what it
spent building, then the rest of the warm-up, with the process's memory after each (RSS and
its peak, VmHWM, in MiB, as the scale benchmark measures them). The model is loaded first,
so its time and memory are not the store's. For issue 24's "open again and first recall"
beside `chitta bench scale`, whose own figure comes from the worker that has just built
the graph.

    python benchmarks/open_parts.py HOME REALM QUERY [--queries 200]

HOME is a data folder (e.g. a scale benchmark's `<workdir>/n100000/home`). With
``--queries N``, after the warm-up it also times N hybrid recalls of the scale benchmark's
own questions (its query pool, after the one it warms up with) on the reopened store — the
steady state of a restarted daemon, whose vectors and graphs are mapped from their files —
and reports their p50 and p95, each stage's median (``stages_p50``: a stage a recall skipped
is not counted for it) and the memory after them. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("realm")
    parser.add_argument("query")
    parser.add_argument("--queries", type=int, default=0)
    args = parser.parse_args()

    from chitta.api import Chitta
    from chitta.bench.scale.measure import memory_mb, timed
    from chitta.config import Settings

    chitta = Chitta.open(Settings(home=args.home), through_daemon=False)
    try:
        chitta.embedder.embed(["the model is loaded before the store's indexes"])
        out: dict[str, object] = {"model_loaded": memory_mb()}
        took, result = timed(
            lambda: chitta.recall(args.query, realm=args.realm, limit=10, strategy="hybrid")
        )
        out["first_recall_s"] = round(took, 3)
        out["first_recall_parts_ms"] = {k: round(v) for k, v in result.timing_ms.items()}
        out["after_first_recall"] = memory_mb()
        took, out["warm_up_ms"] = timed(chitta.store.warm)
        out["warm_up_s"] = round(took, 3)
        out["after_warm_up"] = memory_mb()
        if args.queries:
            out["hybrid_ms"] = _timed_recalls(chitta, args.realm, args.queries)
            out["after_queries"] = memory_mb()
    finally:
        chitta.close()
    print(json.dumps(out))


def _timed_recalls(chitta, realm: str, count: int) -> dict[str, object]:
    """p50 and p95 of ``count`` hybrid recalls of the scale benchmark's questions, ms, and
    the median of each stage the recall times (its ``timing_ms``: embed, each lane, fuse,
    load, score, inhibit, confidence, updates, …)."""
    from chitta.bench import environment, locomo
    from chitta.bench.scale.measure import timed
    from chitta.bench.scale.settings import SEED
    from chitta.bench.scale.texts import query_pool
    from chitta.bench.score import percentile

    pool = query_pool(locomo.load(environment.default_locomo()), SEED)[1 : 1 + count]
    took, stages = [], {}
    for q in pool:
        seconds, result = timed(lambda q=q: chitta.recall(q, realm=realm, limit=10,
                                                          strategy="hybrid"))  # fmt: skip
        took.append(1000 * seconds)
        for stage, ms in result.timing_ms.items():
            stages.setdefault(stage, []).append(ms)
    return {"p50": round(percentile(took, 50), 2), "p95": round(percentile(took, 95), 2),
            "n": len(took),
            "stages_p50": {k: round(percentile(v, 50), 2) for k, v in stages.items()}}  # fmt: skip


if __name__ == "__main__":
    main()
