"""An HNSW graph over one realm's live vectors: approximate inner-product search.

Hierarchical navigable small-world graphs (Malkov & Yashunin, "Efficient and robust
approximate nearest neighbor search using Hierarchical Navigable Small World graphs",
IEEE TPAMI 2020), as implemented by ``usearch``. The graph is a derived cache: its keys are
its own, mapped to the rows of :class:`chitta.store.vectors.VectorIndex`, which holds the
exact vectors read from the store file.
"""

from __future__ import annotations

import numpy as np
from usearch.index import Index

#: A realm is searched through its HNSW graph once it holds this many live vectors; below,
#: exact search. Measured with `python -m chitta.bench.scale.hnsw_crossover` on the scale
#: benchmark's real MiniLM vectors, 200 LoCoMo questions, depth 40, 2 cores, the machine quiet
#: (benchmarks/results/hnsw-crossover-quiet.json; docs/benchmarks.md), exact / HNSW p50:
#: 0.09 / 0.16 ms at 5k, 0.20 / 0.32 ms at 10k, 0.58 / 0.63 ms at 20k, 1.80 / 0.94 ms at 50k,
#: 3.69 / 1.11 ms at 100k. Below 50k exact search costs under 2 ms of a ~10 ms recall, and a
#: graph would add a build (8 s at 50k), a sidecar file and memory for less than a millisecond;
#: from 50k the graph is twice as fast or more. (On a loaded machine numpy's threaded product
#: suffers most: 4.4 ms at 10k then, against HNSW's 0.55; benchmarks/results/hnsw-crossover.json.)
HNSW_MIN_VECTORS = 50_000
#: Graph degree (M) and build beam (efConstruction); usearch's defaults, which gave
#: recall@10 ≥ 0.99 against exact at every size measured (0.991 at 50k, 0.992 at 100k).
CONNECTIVITY = 16
EXPANSION_ADD = 128
#: Search beam (ef): 64 gave recall@10 0.986 at 100k, 128 0.9905, 256 0.9915 (a first probe,
#: queries near stored vectors): past 128 the graph, not the beam, limits recall.
EXPANSION_SEARCH = 128
#: The graph keeps its vectors as float16 (issue 24, compact vectors): half the memory and
#: sidecar of float32, and a quicker build. On 34,428 real MiniLM turn vectors (300 queries
#: near stored ones, this graph's settings) recall@10 against exact float32 search was
#: 0.9997 for f16 and 1.0000 for f32; int8 gave 0.9613, too lossy. The exact float32 vectors
#: stay in the store and in :class:`chitta.store.vectors.VectorIndex`.
DTYPE = "f16"


class RealmAnn:
    """One realm's HNSW graph; keys are its own, ``rows`` maps each key to an index row."""

    def __init__(self, dim: int, index: Index | None = None) -> None:
        self.dim = dim
        self._index = index if index is not None else new_index(dim)
        self._rows = np.full(max(1024, len(self._index)), -1, dtype=np.int64)
        self._key_of: dict[int, int] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self._key_of)

    def __contains__(self, row: int) -> bool:
        return row in self._key_of

    @property
    def index(self) -> Index:
        return self._index

    def keyed_rows(self) -> list[tuple[int, int]]:
        """(key, row) of every vector in the graph, by key."""
        return sorted((k, r) for r, k in self._key_of.items())

    def adopt(self, keys: np.ndarray, rows: np.ndarray, next_key: int) -> None:
        """Take over a restored graph whose ``keys`` stand for index ``rows``; new vectors
        get keys from ``next_key`` on (past every key it ever held, removed ones included)."""
        self._next = max(next_key, int(keys.max()) + 1 if keys.size else 0)
        self._ensure(self._next)
        self._rows[keys] = rows
        self._key_of = dict(zip(rows.tolist(), keys.tolist(), strict=True))

    def _ensure(self, size: int) -> None:
        if size > len(self._rows):
            grown = np.full(max(size, 2 * len(self._rows)), -1, dtype=np.int64)
            grown[: len(self._rows)] = self._rows
            self._rows = grown

    def add(self, rows: np.ndarray, vectors: np.ndarray, *, threads: int = 1) -> None:
        """Add (or replace) the vectors of index ``rows``."""
        if rows.size == 0:
            return
        self.remove(rows)
        keys = np.arange(self._next, self._next + rows.size, dtype=np.uint64)
        self._next += rows.size
        self._ensure(self._next)
        self._index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32), threads=threads)
        self._rows[keys.astype(np.int64)] = rows
        self._key_of.update(zip(rows.tolist(), keys.tolist(), strict=True))

    def remove(self, rows: np.ndarray) -> None:
        """Take the vectors of index ``rows`` out of the graph (absent rows are ignored)."""
        keys = [self._key_of.pop(int(r)) for r in rows.tolist() if int(r) in self._key_of]
        if keys:
            self._index.remove(np.array(keys, dtype=np.uint64))
            self._rows[keys] = -1

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """The index rows of up to ``k`` approximate nearest, best first (their cosines are
        the caller's to take from the exact vectors: the graph's are float16)."""
        k = min(k, len(self._key_of))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        matches = self._index.search(query.astype(np.float32), k, threads=1)
        return self._rows[np.asarray(matches.keys, dtype=np.int64)]


def new_index(dim: int) -> Index:
    """An empty graph with chitta's HNSW settings (inner product over unit vectors)."""
    return Index(
        ndim=dim,
        metric="ip",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
