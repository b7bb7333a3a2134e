"""``dense``: exact cosine between the query and every turn, MiniLM vectors, nothing else."""

from __future__ import annotations

import numpy as np

from chitta.bench.locomo import Conversation
from chitta.embed.base import Embedder


class DenseSystem:
    name = "dense"

    def __init__(self, embedder: Embedder, doc_vectors: dict[str, np.ndarray]) -> None:
        self._embedder = embedder
        self._doc_vectors = doc_vectors  # turn text -> unit vector, shared with other systems
        self._index: dict[str, tuple[np.ndarray, list[str]]] = {}

    def setup(self) -> None:
        pass

    def load(self, realm: str, conversation: Conversation) -> None:
        matrix = np.stack([self._doc_vectors[t.memory_text] for t in conversation.turns])
        self._index[realm] = (matrix, [t.id for t in conversation.turns])

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        """The ``k`` nearest turns by cosine; ``now_ms`` is ignored (cosine knows no time)."""
        matrix, ids = self._index[realm]
        sims = matrix @ self._embedder.embed([query]).vectors[0]
        top = np.argsort(-sims, kind="stable")[:k]
        return [ids[i] for i in top]

    def close(self) -> None:
        self._index.clear()
