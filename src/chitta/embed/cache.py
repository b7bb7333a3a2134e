"""An LRU cache in front of any embedder (seed 001: SmritiYantra, here 10,000 entries).

Entries are keyed by a 16-byte BLAKE2b digest of the text, not by the text: an entry then
costs the same (about 1.7 KB at dim 384) whatever the text's length, so the cache's memory is
bounded by its entry count alone — keyed by text, 10,000 entries of 2 MiB queries would have
held 20 GB. A digest collision, at 2^-64 for a billion texts, is not a concern.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from chitta.config import EMBED_CACHE_SIZE
from chitta.embed.base import Embedder, Embedding, ModelIdentity

#: Bytes an entry takes beyond its vector's data (the digest, the tuple, the array object, the
#: LRU's link), as tracemalloc measured it; for the estimate in stats().
_OVERHEAD = 300


def _key(text: str) -> bytes:
    # surrogatepass: a lone surrogate (JSON "\ud800") still has one stable key.
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CachedEmbedder:
    """Remembers the vectors of recent texts; counts hits and misses."""

    def __init__(self, inner: Embedder, capacity: int = EMBED_CACHE_SIZE) -> None:
        self.inner = inner
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[bytes, tuple[np.ndarray, bool]] = OrderedDict()
        self._lock = threading.Lock()

    def identity(self) -> ModelIdentity:
        return self.inner.identity()

    def embed(self, texts: list[str]) -> Embedding:
        keys = [_key(text) for text in texts]
        found: dict[int, tuple[np.ndarray, bool]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    found[i] = entry
            self.hits += len(found)
            self.misses += len(texts) - len(found)
        # Embed each distinct missing text once, even if it repeats within the batch.
        first: dict[bytes, int] = {}
        for i in range(len(texts)):
            if i not in found:
                first.setdefault(keys[i], i)
        fresh = self.inner.embed([texts[i] for i in first.values()]) if first else None
        computed: dict[bytes, tuple[np.ndarray, bool]] = {}
        if fresh is not None:
            for j, key in enumerate(first):
                # A copy: a row of the batch would keep the whole batch's array alive.
                computed[key] = (fresh.vectors[j].copy(), fresh.truncated[j])
            with self._lock:
                for key, entry in computed.items():
                    self._entries[key] = entry
                    self._entries.move_to_end(key)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
        dim = self.identity().dim
        vectors = np.empty((len(texts), dim), dtype=np.float32)
        truncated: list[bool] = []
        for i, key in enumerate(keys):
            vec, cut = found[i] if i in found else computed[key]
            vectors[i] = vec
            truncated.append(cut)
        return Embedding(vectors, tuple(truncated))

    def release_memory(self) -> None:
        """The inner embedder's :meth:`release_memory`, when it has one (the cache keeps
        its entries: they are bounded)."""
        release = getattr(self.inner, "release_memory", None)
        if release is not None:
            release()

    def stats(self) -> dict[str, int]:
        with self._lock:
            size = len(self._entries)
            vector = next(iter(self._entries.values()))[0].nbytes if size else 0
            return {
                "size": size,
                "capacity": self.capacity,
                "bytes": size * (vector + _OVERHEAD),
                "hits": self.hits,
                "misses": self.misses,
            }
