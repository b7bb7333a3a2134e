"""The HNSW graph's recall@10 against exact search on real MiniLM vectors at a million (issue
24, compact vectors): the scale benchmark's own texts (LoCoMo turns, then recombinations of
two) all embedded — none synthetic — and its query pool, searched as the `sem` lane searches
a realm (chitta's VectorIndex: the float16 graph's 2k candidates ranked by their float32
vectors) and exactly.

    python benchmarks/real_recall.py WORKDIR [--sizes 100000,1000000] [--queries 200]
                                             [--ef 0,256,512]

WORKDIR holds the vector cache (the scale benchmark's own, `chitta bench scale --workdir`):
texts it lacks are embedded and added to it (about 300 a second on two cores: an hour for a
million), so a rerun costs only the graphs. ``--ef``: the search beams to try on each graph
(0: the one chitta chooses for its size). Prints JSON and writes it to --out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--ef", default="0")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/real-recall.json"))
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    import sys

    from chitta import files
    from chitta.bench import environment, locomo
    from chitta.bench.scale.build_phase import _cache_path, _real_vectors
    from chitta.bench.scale.events import Events
    from chitta.bench.scale.measure import load_model
    from chitta.bench.scale.texts import base_turns, memory_texts, query_pool
    from chitta.bench.scale.vectors import VectorCache
    from chitta.store import ann
    from chitta.store.records import Scope
    from chitta.store.vectors import VectorIndex

    dataset = locomo.load(environment.default_locomo())
    texts = memory_texts(base_turns(dataset), sizes[-1])
    _, inner = load_model()
    cache = VectorCache(_cache_path(args.workdir, inner))
    started = time.perf_counter()
    vectors, embedded = _real_vectors(texts, inner, cache, Events(sys.stderr), "real recall")
    embed_s = time.perf_counter() - started
    queries = inner.embed(query_pool(dataset)[: args.queries]).vectors.astype(np.float32)

    out: dict[str, object] = {"k": args.k, "queries": len(queries), "vectors": embedded,
                              "vectors_s": round(embed_s, 1), "sizes": {}}  # fmt: skip
    scope = Scope("r")
    for n in sizes:
        index = VectorIndex(vectors.shape[1], capacity=n, hnsw_min=1)
        index.add([str(i) for i in range(n)], vectors[:n], [("r", "", "")] * n, graphs=False)
        started = time.perf_counter()
        code = index.realms_due_a_graph()["r"]
        index.attach(code, index.build_graph(code))
        build_s = time.perf_counter() - started
        exact = [{i for i, _ in index.search(q, scope, args.k, exact=True)} for q in queries]
        beams = {}
        for ef in (int(e) for e in args.ef.split(",")):
            beam = ef or ann.expansion_for(n)
            real = ann.expansion_for
            ann.expansion_for = lambda size, beam=beam: beam  # the beam a search sets
            try:
                found, timings = 0, []
                for q, truth in zip(queries, exact, strict=True):
                    t = time.perf_counter()
                    hits = index.search(q, scope, args.k)
                    timings.append(time.perf_counter() - t)
                    found += len(truth & {i for i, _ in hits})
            finally:
                ann.expansion_for = real
            beams[str(beam)] = {
                "recall_at_k": round(found / (args.k * len(queries)), 4),
                "graph_search_ms_p50": round(1000 * float(np.median(timings)), 3),
            }
        out["sizes"][str(n)] = {"graph_build_s": round(build_s, 1), "by_ef": beams}  # type: ignore[index]
        print(json.dumps({n: out["sizes"][str(n)]}), flush=True)  # type: ignore[index]
    files.write_text_private(args.out, json.dumps(out, indent=1) + "\n")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
