"""Where HNSW starts to pay: exact and HNSW search timed at several realm sizes, and recall@10.

``python -m chitta.bench.scale.hnsw_crossover --workdir /tmp/ann-scale --sizes 2k,10k,20k,50k,100k``

The vectors are the scale benchmark's cached MiniLM vectors of LoCoMo turns and their
recombinations (``vector-cache-*.npz`` in ``--workdir``, written by ``chitta bench scale``);
the queries are LoCoMo questions, embedded with the same model. For each size the first N
vectors go into a :class:`VectorIndex` whose threshold is N, so its graph is built exactly as
a store builds one; each query is then searched at the lane's depth (40) exactly and through
the graph, one after the other. Reports p50 / p95 ms of both, the graph's build time, and
recall@10 of the graph against exact search. Writes JSON to ``--out`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from chitta.bench.scale.measure import load_model
from chitta.bench.scale.settings import SEED, parse_sizes
from chitta.bench.scale.texts import query_pool
from chitta.bench.score import percentile
from chitta.files import write_text_private
from chitta.store.ann import CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH
from chitta.store.records import Scope
from chitta.store.vectors import VectorIndex

DEPTH = 40  # the lanes' depth at limit 10 (RecallConfig.depth)
SCOPE = ("bench", "", "")


def _p(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def measure(vectors: np.ndarray, queries: np.ndarray, n: int) -> dict[str, Any]:
    """Exact and HNSW search over the first ``n`` vectors, timed and compared."""
    index = VectorIndex(vectors.shape[1], capacity=n, hnsw_min=n)
    t = time.perf_counter()
    index.add([f"m{i}" for i in range(n)], vectors[:n], [SCOPE] * n)
    build_s = time.perf_counter() - t
    scope = Scope(SCOPE[0])
    exact_ms, hnsw_ms, recall = [], [], []
    for q in queries:
        t = time.perf_counter()
        truth = index.search(q, scope, DEPTH, exact=True)
        exact_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        got = index.search(q, scope, DEPTH)
        hnsw_ms.append((time.perf_counter() - t) * 1000)
        top = {m for m, _ in truth[:10]}
        recall.append(len(top.intersection(m for m, _ in got[:10])) / len(top))
    return {
        "n": n,
        "build_s": round(build_s, 2),
        "exact_ms": _p(exact_ms),
        "hnsw_ms": _p(hnsw_ms),
        "hnsw_recall_at_10": round(float(np.mean(recall)), 4),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--sizes", default="2k,5k,10k,20k,50k,100k")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/hnsw-crossover.json"))
    args = parser.parse_args(argv)
    cache = sorted(args.workdir.glob("vector-cache-*.npz"))
    if not cache:
        raise SystemExit(f"no vector cache in {args.workdir}; run `chitta bench scale` there")
    with np.load(cache[0]) as data:
        vectors = data["vectors"].astype(np.float32)
    sizes = [n for n in parse_sizes(args.sizes) if n <= len(vectors)]
    from chitta.bench import environment, locomo

    dataset = locomo.load(args.data or environment.default_locomo())
    texts = query_pool(dataset, SEED)[: args.queries]
    _, model = load_model()
    queries = model.embed(texts).vectors
    before = environment.loadavg()
    rows = [measure(vectors, queries, n) for n in sizes]
    record = {
        "command": "python -m chitta.bench.scale.hnsw_crossover "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "settings": {
            "connectivity": CONNECTIVITY,
            "expansion_add": EXPANSION_ADD,
            "expansion_search": EXPANSION_SEARCH,
            "depth": DEPTH,
            "queries": len(texts),
            "vectors": cache[0].name,
        },  # fmt: skip
        "loadavg_before": before,
        "loadavg_after": environment.loadavg(),
        "figures": rows,
    }
    write_text_private(args.out, json.dumps(record, indent=1) + "\n")
    print("| realm size | exact p50 / p95 ms | HNSW p50 / p95 ms | HNSW recall@10 | build s |")
    print("|---|---|---|---|---|")
    for r in rows:
        e, h = r["exact_ms"], r["hnsw_ms"]
        print(f"| {r['n']:,} | {e['p50']} / {e['p95']} | {h['p50']} / {h['p95']} | "
              f"{r['hnsw_recall_at_10']:.4f} | {r['build_s']} |")  # fmt: skip


if __name__ == "__main__":
    main()
