"""An LRU cache in front of any embedder (seed 001: SmritiYantra, here 10,000 entries)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from chitta.config import EMBED_CACHE_SIZE
from chitta.embed.base import Embedder, Embedding, ModelIdentity


class CachedEmbedder:
    """Remembers the vectors of recent texts; counts hits and misses."""

    def __init__(self, inner: Embedder, capacity: int = EMBED_CACHE_SIZE) -> None:
        self.inner = inner
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, tuple[np.ndarray, bool]] = OrderedDict()
        self._lock = threading.Lock()

    def identity(self) -> ModelIdentity:
        return self.inner.identity()

    def embed(self, texts: list[str]) -> Embedding:
        found: dict[int, tuple[np.ndarray, bool]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                entry = self._entries.get(text)
                if entry is not None:
                    self._entries.move_to_end(text)
                    found[i] = entry
            self.hits += len(found)
            self.misses += len(texts) - len(found)
        missing = [i for i in range(len(texts)) if i not in found]
        # Embed each distinct missing text once, even if it repeats within the batch.
        distinct = list(dict.fromkeys(texts[i] for i in missing))
        fresh = self.inner.embed(distinct) if distinct else None
        computed: dict[str, tuple[np.ndarray, bool]] = {}
        if fresh is not None:
            for j, text in enumerate(distinct):
                computed[text] = (fresh.vectors[j], fresh.truncated[j])
            with self._lock:
                for text, entry in computed.items():
                    self._entries[text] = entry
                    self._entries.move_to_end(text)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
        dim = self.identity().dim
        vectors = np.empty((len(texts), dim), dtype=np.float32)
        truncated: list[bool] = []
        for i, text in enumerate(texts):
            vec, cut = found[i] if i in found else computed[text]
            vectors[i] = vec
            truncated.append(cut)
        return Embedding(vectors, tuple(truncated))

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "size": len(self._entries),
                "capacity": self.capacity,
                "hits": self.hits,
                "misses": self.misses,
            }
