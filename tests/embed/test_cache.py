"""The LRU cache returns the same vectors, counts hits and misses, and evicts oldest first."""

import gc
import tracemalloc

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


def test_an_entry_costs_the_same_whatever_the_length_of_its_text(embedder) -> None:
    cache = CachedEmbedder(embedder.inner, capacity=100)
    cache.embed(["warm up the model"])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(20):  # 100 KB each: keyed by text, the cache would hold 2 MB of them
            cache.embed([f"{i} " + "a long query text " * 5_600])
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 20 * 4_000  # a digest and a vector each
    stats = cache.stats()
    assert stats["size"] == 21 and stats["bytes"] < 21 * 2_000
    again = cache.embed(["7 " + "a long query text " * 5_600])  # still found by its digest
    assert cache.stats()["hits"] == 1 and again.truncated == (True,)
