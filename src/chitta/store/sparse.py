"""Sparse codes of memories and their posting index: the store side of the ``hdc`` lane.

A memory's code is 64 active features out of 16,384 (seed 001: "64 of 16,384 features active
per memory"), derived from its embedding alone by the fly olfactory hashing algorithm of
Dasgupta, Stevens & Navlakha, "A neural algorithm for a fundamental computing problem",
Science 358:793-796 (2017):

1. centre the vector (subtract its own mean over dimensions: the fly's divisive normalisation
   gives every odour the same mean rate);
2. expand it with a sparse binary random projection: each of the 16,384 features sums a fixed
   random 12 % of the input dimensions (a Kenyon cell samples about 6 of the 50 projection
   neurons);
3. keep the 64 strongest features, winner-take-all (the APL neuron silences the rest), with
   their activations, L2-normalised.

Codes are never stored: like the vector index, the posting index (feature → memories, per
realm) is derived from the vectors in the store, built on first use, and kept in step with
writes by the store. The projection comes from a fixed seed, so one embedding always gets one
code within a process.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from chitta.store.records import Memory, Scope
from chitta.store.vectors import live_vectors

FEATURES = 16_384
ACTIVE = 64
#: Share of the input dimensions each feature sums (6 of 50 in the fly).
FAN_IN_SHARE = 0.12
SEED = 20171110  # the paper's publication date; any fixed value will do
_BATCH = 512  # rows projected at a time: 512 x 16,384 float32 is 32 MB


class SparseCoder:
    """Turns unit vectors of one dimension into (features, activations) codes."""

    def __init__(self, dim: int, *, features: int = FEATURES, active: int = ACTIVE) -> None:
        if not 0 < active <= features:
            raise ValueError("need 0 < active <= features")
        self.dim, self.features, self.active = dim, features, active
        fan_in = max(1, round(FAN_IN_SHARE * dim))
        rng = np.random.default_rng(SEED)
        picks = rng.permuted(np.tile(np.arange(dim), (features, 1)), axis=1)[:, :fan_in]
        # Dense 0/1 matrix: one BLAS product beats gathering the sparse picks.
        self._projection = np.zeros((dim, features), dtype=np.float32)
        self._projection[picks, np.arange(features)[:, None]] = 1.0

    def encode(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Codes of ``vectors`` (n, dim): features (n, active) int32 ascending, and their
        activations (n, active) float32, non-negative, each row of unit length."""
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        n = vectors.shape[0]
        feats = np.empty((n, self.active), dtype=np.int32)
        acts = np.empty((n, self.active), dtype=np.float32)
        for start in range(0, n, _BATCH):
            chunk = vectors[start : start + _BATCH]
            centred = chunk - chunk.mean(axis=1, keepdims=True)
            projected = centred @ self._projection
            top = np.argpartition(-projected, self.active - 1, axis=1)[:, : self.active]
            top.sort(axis=1)
            values = np.maximum(np.take_along_axis(projected, top, axis=1), 0.0)
            norms = np.linalg.norm(values, axis=1, keepdims=True)
            feats[start : start + len(chunk)] = top
            acts[start : start + len(chunk)] = values / np.where(norms > 0, norms, 1.0)
        return feats, acts


@lru_cache(maxsize=4)
def coder_for(dim: int) -> SparseCoder:
    """The shared coder of a dimension (its projection takes 25 MB at dim 384)."""
    return SparseCoder(dim)


class SparseIndex:
    """Live memories' sparse codes with a posting list per (realm, feature)."""

    def __init__(self, coder: SparseCoder) -> None:
        self.coder = coder
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._alive: list[bool] = []
        self._scope: list[tuple[str, str, str]] = []
        self._codes: list[tuple[np.ndarray, np.ndarray]] = []
        # (realm, feature) -> rows holding it and their activations there.
        self._postings: dict[tuple[str, int], tuple[array, array]] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return sum(self._alive)

    def add(self, ids: list[str], vectors: np.ndarray, scopes: list[tuple[str, str, str]]) -> None:
        """Encode and post (or re-post) memories; ``scopes`` holds (realm, agent, channel)."""
        if not ids:
            return
        feats, acts = self.coder.encode(vectors)
        with self._lock:
            for memory_id, f, a, scope in zip(ids, feats, acts, scopes, strict=True):
                row = self._row.get(memory_id)
                if row is None:
                    row = len(self._ids)
                    self._ids.append(memory_id)
                    self._row[memory_id] = row
                    self._alive.append(True)
                    self._scope.append(scope)
                    self._codes.append((f, a))
                else:
                    self._unpost(row)
                    self._alive[row] = True
                    self._scope[row] = scope
                    self._codes[row] = (f, a)
                realm = scope[0]
                for feature, activation in zip(f.tolist(), a.tolist(), strict=True):
                    rows, weights = self._postings.setdefault(
                        (realm, feature), (array("i"), array("f"))
                    )
                    rows.append(row)
                    weights.append(activation)

    def add_live(self, items: Sequence[tuple[Memory, np.ndarray | None]]) -> None:
        """Post the memories of ``items`` that have a vector and are not forgotten."""
        live = live_vectors(items)
        if live is not None:
            self.add(*live)

    def _unpost(self, row: int) -> None:
        realm = self._scope[row][0]
        for feature in self._codes[row][0].tolist():
            rows, weights = self._postings[(realm, feature)]
            at = rows.index(row)
            del rows[at]
            del weights[at]

    def set_alive(self, memory_id: str, alive: bool) -> None:
        """Hide (soft delete, purge) or show (restore) a memory's code."""
        with self._lock:
            row = self._row.get(memory_id)
            if row is not None:
                self._alive[row] = alive

    def code(self, memory_id: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A live memory's (features, activations), or None."""
        with self._lock:
            row = self._row.get(memory_id)
            return self._codes[row] if row is not None and self._alive[row] else None

    def postings(self, realm: str, feature: int) -> list[str]:
        """Live memories of ``realm`` whose code holds ``feature``."""
        with self._lock:
            rows = self._postings.get((realm, feature), (array("i"), array("f")))[0]
            return [self._ids[r] for r in rows if self._alive[r]]

    def search(self, query: np.ndarray, scope: Scope, k: int) -> list[tuple[str, float]]:
        """The ``k`` live memories in ``scope`` whose codes overlap the query's most:
        (memory id, sum over shared features of the product of activations), best first."""
        if k <= 0:
            return []
        feats, acts = self.coder.encode(query[None, :])
        with self._lock:
            rows, weights = [], []
            for feature, activation in zip(feats[0].tolist(), acts[0].tolist(), strict=True):
                posted = self._postings.get((scope.realm, feature))
                if posted:
                    # Copies, not views: a view would pin the array, and an insert appending
                    # to it on another thread would fail with BufferError.
                    rows.append(np.array(posted[0], dtype=np.int32))
                    weights.append(np.array(posted[1], dtype=np.float32) * activation)
            if not rows:
                return []
            scores = np.bincount(np.concatenate(rows), weights=np.concatenate(weights))
            candidates = np.flatnonzero(scores)
            # Best first; equal scores keep insertion (id) order.
            order = candidates[np.argsort(-scores[candidates], kind="stable")]
            found: list[tuple[str, float]] = []
            for row in order.tolist():
                if self._visible(row, scope):
                    found.append((self._ids[row], float(scores[row])))
                    if len(found) == k:
                        break
            return found

    def _visible(self, row: int, scope: Scope) -> bool:
        if not self._alive[row]:
            return False
        _, agent, channel = self._scope[row]
        return (scope.agent_id is None or agent == scope.agent_id) and (
            scope.channel is None or channel == scope.channel
        )
