"""What themes cost and what they look like (docs/benchmarks.md, "Themes"): on the development
sets' realms, the themes a first build makes (count, sizes) and its time, one write's upkeep
and the theme lane's search, timed; and on synthetic clusters at larger sizes, the build and
a write. Not part of chitta; prints JSON.

    PYTHONPATH=src .venv/bin/python benchmarks/themes.py [--vector-cache /work/vcache] \
        [--synthetic 10000,50000,100000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from chitta.bench.devsets import bench_embedder, loaded_sets
from chitta.bench.runner import realm_for
from chitta.store.records import Scope
from chitta.store.themes import ThemeIndex

SEARCH = {"themes": 5, "diversity": 0.3, "theme_weight": 1.0}


def _real(vector_cache: Path | None) -> dict:
    embedder = bench_embedder(vector_cache)
    out: dict = {}
    for name, data, store in loaded_sets("tune", embedder):
        chitta = store.open()
        started = time.perf_counter()
        themes = chitta.store.themes()
        build_s = time.perf_counter() - started
        realms = [realm_for(c.sample_id) for c in data.conversations]
        sizes = [themes.sizes(r) for r in realms]
        search_ms = []
        for conv in data.conversations:
            realm = realm_for(conv.sample_id)
            for q in conv.questions[:40]:
                vector = embedder.embed([q.question]).vectors[0]
                started = time.perf_counter()
                themes.search(vector, Scope(realm), 40, **SEARCH)
                search_ms.append((time.perf_counter() - started) * 1000)
        flat = [s for per in sizes for s in per]
        out[name] = {
            "realms": len(realms),
            "memories": sum(flat),
            "themes_per_realm": [len(per) for per in sizes],
            "size_median": statistics.median(flat),
            "size_max": max(flat),
            "singletons": sum(1 for s in flat if s == 1),
            "build_s": round(build_s, 3),
            "search_ms_p50": round(statistics.median(search_ms), 3),
            "search_ms_p95": round(float(np.percentile(search_ms, 95)), 3),
        }
    return out


def _synthetic(n: int, dim: int = 384, seed: int = 0) -> dict:
    """``n`` unit vectors around n/20 random topics, one realm: a first build, then 200
    writes one at a time."""
    rng = np.random.default_rng(seed)
    topics = max(1, n // 20)
    centres = rng.normal(size=(topics, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    x = centres[rng.integers(0, topics, n + 200)]
    x += 1.2 * rng.normal(size=x.shape).astype(np.float32) / np.sqrt(dim)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = ThemeIndex(dim)
    scope = ("r", "", "")
    started = time.perf_counter()
    index.build([f"m{i}" for i in range(n)], x[:n], [scope] * n)
    build_s = time.perf_counter() - started
    writes = []
    for i in range(n, n + 200):
        started = time.perf_counter()
        index.add([f"m{i}"], x[i : i + 1], [scope])
        writes.append((time.perf_counter() - started) * 1000)
    return {"memories": n, "themes": len(index.sizes("r")), "build_s": round(build_s, 2),
            "write_ms_p50": round(statistics.median(writes), 3),
            "write_ms_p95": round(float(np.percentile(writes, 95)), 3)}  # fmt: skip


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--vector-cache", type=Path)
    args.add_argument("--synthetic", default="10000,50000,100000")
    opts = args.parse_args()
    result = {"real": _real(opts.vector_cache)}
    result["synthetic"] = [_synthetic(int(n)) for n in opts.synthetic.split(",") if n]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
