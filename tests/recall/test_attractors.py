"""Attractors: the heaviest entity clusters of a realm, cached for a while."""

from __future__ import annotations

from chitta.recall.attractors import MIN_MEMBERS, AttractorCache, find_attractors
from chitta.store.sqlite import Store


def _add(store: Store, make_memory, texts: list[str]) -> list[str]:
    memories = [make_memory(t) for t in texts]
    store.insert([(m, None) for m in memories])
    return [m.id for m in memories]


def test_a_tight_cluster_outweighs_a_loose_one_of_the_same_size(store, make_memory) -> None:
    tight = _add(store, make_memory, [f"we met Oliver in Bergen, day {i}" for i in range(5)])
    _add(store, make_memory, [f"a postcard from Paris number {i}" for i in range(5)])
    _add(store, make_memory, ["we met Ada once", "and Ada twice"])  # too small
    found = find_attractors(store, "work", max_df=100)
    assert [a.entity for a in found][:3] == ["bergen", "oliver", "paris"]
    assert found[0].members == set(tight) and found[0].density == 1.0
    assert found[2].density == 0.0
    assert all(len(a.members) >= MIN_MEMBERS for a in found)
    assert find_attractors(store, "work", max_df=100, limit=1) == found[:1]
    assert find_attractors(store, "work", max_df=4) == ()  # every cluster too common


def test_the_cache_keeps_attractors_for_its_ttl(store, make_memory) -> None:
    now = [0.0]
    cache = AttractorCache(ttl=300, clock=lambda: now[0])
    _add(store, make_memory, [f"we met Oliver, day {i}" for i in range(3)])
    first = cache.get(store, "work", 100)
    _add(store, make_memory, [f"a postcard from Paris number {i}" for i in range(4)])
    now[0] = 299
    assert cache.get(store, "work", 100) == first
    now[0] = 301
    assert cache.get(store, "work", 100)[0].entity == "paris"
