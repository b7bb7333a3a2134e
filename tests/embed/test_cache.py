"""The LRU cache returns the same vectors, counts hits and misses, and evicts oldest first."""

import numpy as np

from chitta.embed.cache import CachedEmbedder


def test_hits_misses_and_identical_vectors(embedder) -> None:
    cache = CachedEmbedder(embedder.inner, capacity=3)
    first = cache.embed(["alpha beta gamma", "delta epsilon"])
    again = cache.embed(["delta epsilon", "alpha beta gamma"])
    assert np.array_equal(first.vectors[0], again.vectors[1])
    assert cache.stats()["hits"] == 2 and cache.stats()["misses"] == 2


def test_repeated_text_in_one_batch_is_embedded_once(embedder) -> None:
    cache = CachedEmbedder(embedder.inner, capacity=10)
    out = cache.embed(["same text again", "same text again"])
    assert np.array_equal(out.vectors[0], out.vectors[1])
    assert cache.stats()["size"] == 1


def test_least_recently_used_is_evicted(embedder) -> None:
    cache = CachedEmbedder(embedder.inner, capacity=2)
    cache.embed(["one one one"])
    cache.embed(["two two two"])
    cache.embed(["one one one"])  # refresh: "two" is now the oldest
    cache.embed(["three three three"])
    before = cache.stats()["misses"]
    cache.embed(["one one one"])
    assert cache.stats()["misses"] == before  # still cached
    cache.embed(["two two two"])
    assert cache.stats()["misses"] == before + 1  # was evicted
