"""An HNSW graph over one realm's live vectors: approximate inner-product search.

Hierarchical navigable small-world graphs (Malkov & Yashunin, "Efficient and robust
approximate nearest neighbor search using Hierarchical Navigable Small World graphs",
IEEE TPAMI 2020), as implemented by ``usearch``. The graph is a derived cache: its keys are
its own, mapped to the rows of :class:`chitta.store.vectors.VectorIndex`, which holds the
exact vectors read from the store file.
"""

from __future__ import annotations

import math
from collections.abc import Callable

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
#: Search beam (ef) of a graph of up to :data:`EXPANSION_AT` vectors: 64 gave recall@10 0.986
#: at 100k, 128 0.9905, 256 0.9915 (a first probe, queries near stored vectors): at that size
#: the graph, not the beam, limits recall.
EXPANSION_SEARCH = 128
EXPANSION_AT = 100_000
#: A bigger graph needs a wider beam for the same recall: on the scale benchmark's real
#: MiniLM vectors and LoCoMo's questions (`benchmarks/real_recall.py`, 200 queries, this
#: graph's settings, builds of their own), recall@10 against exact search was 0.993–0.9945
#: at 100k with ef 128, and at 400k 0.975–0.982 with 128, 0.991–0.9935 with 256 (1.6 ms a
#: search against 0.9) and 0.996 with 512 (2.8 ms); benchmarks/results/real-recall-400k.json.
#: So the beam grows with the square root of the size past 100k (256 at 400k, 405 at a
#: million: 0.9925 there, where 256 gave 0.984; real-recall-1m.json), up to this.
EXPANSION_MAX = 512


def expansion_for(size: int) -> int:
    """The search beam (ef) for a graph of ``size`` vectors (see :data:`EXPANSION_MAX`)."""
    grown = EXPANSION_SEARCH * math.sqrt(max(1.0, size / EXPANSION_AT))
    return min(EXPANSION_MAX, round(grown))


#: The graph keeps its vectors as float16 (issue 24, compact vectors): half the memory and
#: sidecar of float32, and a quicker build. On 34,428 real MiniLM turn vectors (300 queries
#: near stored ones, this graph's settings) recall@10 against exact float32 search was
#: 0.9997 for f16 and 1.0000 for f32; int8 gave 0.9613, too lossy. The exact float32 vectors
#: stay in the store and in :class:`chitta.store.vectors.VectorIndex`.
DTYPE = "f16"


class RealmAnn:
    """One realm's HNSW graph; keys are its own, ``rows`` maps each key to an index row.

    A graph restored with ``base`` is viewed from a file's bytes (usearch's view: nothing is
    read until a search walks it, and the pages stay the file's): that graph cannot change,
    so a vector removed from it is only marked (its key maps to no row and searches skip
    it), and vectors added go into a small graph of their own in memory (``index``), searched
    beside it. :meth:`merged` gives one graph of both to save.
    """

    def __init__(self, dim: int, index: Index | None = None, *, base: Index | None = None,
                 buffer: memoryview | None = None) -> None:  # fmt: skip
        self.dim = dim
        # The viewed graph before the buffer it points into, so it goes first.
        self._base = base
        self._buffer = buffer
        self._index = index if index is not None else new_index(dim)
        held = len(self._index) + (len(base) if base is not None else 0)
        self._rows = np.full(max(1024, held), -1, dtype=np.int64)
        self._key_of: dict[int, int] = {}
        self._next = 0
        self._base_keys = 0  # keys below this are the viewed graph's
        self._dead = 0  # keys of the viewed graph marked removed

    def __len__(self) -> int:
        return len(self._key_of)

    def __contains__(self, row: int) -> bool:
        return row in self._key_of

    @property
    def viewed(self) -> bool:
        """Whether the graph is viewed from a file (and so searched beside a delta)."""
        return self._base is not None

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
        if self._base is not None:
            self._base_keys = self._next
            self._dead = len(self._base) - len(keys)  # its keys that stand for no row

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
        if not keys:
            return
        self._rows[keys] = -1
        own = [k for k in keys if k >= self._base_keys]
        self._dead += len(keys) - len(own)  # the viewed graph's: marked only
        if own:
            self._index.remove(np.array(own, dtype=np.uint64))

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """The index rows of up to ``k`` approximate nearest, best first (their cosines are
        the caller's to take from the exact vectors: the graph's are float16)."""
        k = min(k, len(self._key_of))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        query = query.astype(np.float32)
        beam = expansion_for(len(self._key_of))
        for graph in (self._index, self._base):
            if graph is not None and graph.expansion_search != beam:
                graph.expansion_search = beam
        if self._base is None:
            return self._rows[np.asarray(self._index.search(query, k, threads=1).keys, np.int64)]
        keys, distances = self._search_base(query, k)
        if len(self._index):
            more = self._index.search(query, k, threads=1)
            keys = np.concatenate([keys, np.asarray(more.keys, dtype=np.int64)])
            distances = np.concatenate([distances, np.asarray(more.distances)])
        best = np.argsort(distances, kind="stable")[:k]
        return self._rows[keys[best]]

    def _search_base(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The viewed graph's ``k`` nearest live keys and their distances: asked for as many
        more as it has marked removed (bounded), then for more while marked ones crowd out
        live ones."""
        size = len(self._base)  # type: ignore[arg-type]
        want = min(size, k + min(self._dead, 4 * k))
        while True:
            found = self._base.search(query, want, threads=1)  # type: ignore[union-attr]
            keys = np.asarray(found.keys, dtype=np.int64)
            live = self._rows[keys] >= 0
            if np.count_nonzero(live) >= k or want >= size:
                return keys[live][:k], np.asarray(found.distances)[live][:k]
            want = min(size, 4 * want)

    def merged(self, vectors_of: Callable[[np.ndarray], np.ndarray]) -> Index:
        """One graph of every live vector, to save: this graph itself when nothing is viewed,
        else the viewed graph read into memory, its marked vectors removed and the delta's
        added (their vectors from ``vectors_of``, by index row)."""
        if self._base is None:
            return self._index
        graph = Index.restore(self._buffer)
        assert graph is not None  # it was viewed from these bytes
        dead = np.flatnonzero(self._rows[: self._base_keys] < 0)
        if dead.size:
            graph.remove(dead.astype(np.uint64)[graph.contains(dead.astype(np.uint64))])
        own = np.arange(self._base_keys, self._next, dtype=np.int64)
        own = own[self._rows[own] >= 0]
        if own.size:
            graph.add(own.astype(np.uint64), vectors_of(self._rows[own]).astype(np.float32))
        return graph


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
