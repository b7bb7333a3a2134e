"""The HNSW crossover measurement: exact and graph search timed and compared at one size."""

from __future__ import annotations

import numpy as np

from chitta.bench.scale.hnsw_crossover import measure


def test_measure_times_both_and_scores_the_graph_against_exact() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(20, 32))
    vectors = (centres[rng.integers(0, 20, 600)] + 0.3 * rng.normal(size=(600, 32))).astype(
        np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:15] + 0.05
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    row = measure(vectors, queries.astype(np.float32), 500)
    assert row["n"] == 500 and row["build_s"] >= 0
    for key in ("exact_ms", "hnsw_ms"):
        assert 0 <= row[key]["p50"] <= row[key]["p95"]
    assert 0.9 <= row["hnsw_recall_at_10"] <= 1.0
