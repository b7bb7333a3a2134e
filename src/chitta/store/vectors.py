"""The in-memory vector index: exact cosine over every live vector of a store.

Derived from the ``embeddings`` table and rebuilt from it on open; the store keeps it in
step with writes. Exact search is the choice up to ~100k vectors (DESIGN.md §2: 3 ms at
100k); an approximate index for larger stores comes with the full recall pipeline.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

from chitta.store.records import Scope


class VectorIndex:
    """Unit vectors with their memory ids and scopes; searched by dot product."""

    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._alive = np.zeros(capacity, dtype=bool)
        # Scope axes as small integer codes, so a scope filter is a vector comparison.
        self._realm = np.zeros(capacity, dtype=np.int32)
        self._agent = np.zeros(capacity, dtype=np.int32)
        self._channel = np.zeros(capacity, dtype=np.int32)
        self._codes: dict[str, int] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return int(self._alive[: len(self._ids)].sum())

    def _code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes) + 1)

    def _grow(self, needed: int) -> None:
        capacity = len(self._alive)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2)
        self._matrix = np.resize(self._matrix, (new, self.dim))
        for name in ("_alive", "_realm", "_agent", "_channel"):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[:capacity] = old
            setattr(self, name, grown)

    def add(self, ids: list[str], vectors: np.ndarray, scopes: list[tuple[str, str, str]]) -> None:
        """Add (or replace) vectors; ``scopes`` holds (realm, agent_id, channel) per id."""
        with self._lock:
            self._grow(len(self._ids) + len(ids))
            for memory_id, vector, (realm, agent, channel) in zip(
                ids, vectors, scopes, strict=True
            ):
                row = self._row.get(memory_id)
                if row is None:
                    row = len(self._ids)
                    self._ids.append(memory_id)
                    self._row[memory_id] = row
                self._matrix[row] = vector
                self._alive[row] = True
                self._realm[row] = self._code(realm)
                self._agent[row] = self._code(agent)
                self._channel[row] = self._code(channel)

    def set_alive(self, memory_id: str, alive: bool) -> None:
        """Hide (soft delete, purge) or show (restore) a vector."""
        with self._lock:
            row = self._row.get(memory_id)
            if row is not None:
                self._alive[row] = alive

    def get(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The live vectors of ``ids`` (copies); ids not in the index or hidden are left out."""
        with self._lock:
            rows = {i: r for i in ids if (r := self._row.get(i)) is not None and self._alive[r]}
            return {i: self._matrix[r].copy() for i, r in rows.items()}

    def _mask(self, scope: Scope) -> np.ndarray | None:
        n = len(self._ids)
        realm = self._codes.get(scope.realm)
        if realm is None:
            return None
        mask = self._alive[:n] & (self._realm[:n] == realm)
        for axis, value in ((self._agent, scope.agent_id), (self._channel, scope.channel)):
            if value is not None:
                code = self._codes.get(value)
                if code is None:
                    return None
                mask &= axis[:n] == code
        return mask

    def search(self, query: np.ndarray, scope: Scope, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest live vectors in ``scope``: (memory id, cosine), best first."""
        with self._lock:
            mask = self._mask(scope)
            if mask is None or k <= 0:
                return []
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return []
            # Scoring every row and masking beats gathering the scope's rows first: one
            # matrix-vector product over contiguous memory.
            sims = self._matrix[: len(self._ids)] @ query.astype(np.float32)
            sims = sims[rows]
            top = np.argpartition(-sims, k - 1)[:k] if rows.size > k else np.arange(rows.size)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(self._ids[rows[i]], float(sims[i])) for i in top]

    def search_other_realms(
        self, query: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest live vectors in every realm but ``scope``'s, under its agent and
        channel (the ``xr`` lane): one product over the matrix, however many realms."""
        with self._lock:
            n = len(self._ids)
            mask = self._alive[:n] & (self._realm[:n] != self._codes.get(scope.realm, 0))
            for axis, value in ((self._agent, scope.agent_id), (self._channel, scope.channel)):
                if value is not None:
                    mask &= axis[:n] == self._codes.get(value, -1)
            rows = np.flatnonzero(mask)
            if rows.size == 0 or k <= 0:
                return []
            sims = (self._matrix[:n] @ query.astype(np.float32))[rows]
            top = np.argpartition(-sims, k - 1)[:k] if rows.size > k else np.arange(rows.size)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(self._ids[rows[i]], float(sims[i])) for i in top]
