"""Attractors: the heaviest entity clusters of a realm, cached for a while."""

from __future__ import annotations

import time

import pytest

from chitta.recall.attractors import MIN_MEMBERS, AttractorCache, find_attractors
from chitta.store.base import Store
from chitta.store.ids import new_id
from chitta.store.records import Triplet


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


def _edge(s: str, o: str, source: str | None = None) -> Triplet:
    now = int(time.time() * 1000) - 1000
    return Triplet(new_id(now), "work", s, "relates_to", o, 1.0, now, None, source, now)


def _zeta(store: Store, make_memory) -> list[str]:
    """A cluster made only of triplets' sources: three notes that name no entity (lower case),
    each the source of an edge touching Zeta."""
    notes = _add(store, make_memory, [f"a note about the thing, part {i}" for i in range(3)])
    store.add_triplets([_edge("Zeta", f"x{i}", source=m) for i, m in enumerate(notes)])
    return notes


def test_a_cluster_can_be_built_from_triplets_sources_only(store, make_memory) -> None:
    notes = _zeta(store, make_memory)
    assert store.links().entity_counts("work") == {}  # no memory names anything
    [zeta] = find_attractors(store, "work", max_df=100)
    assert zeta.entity == "zeta" and zeta.members == set(notes)


@pytest.fixture
def cached(store: Store, make_memory):
    """A cache at a clock the test moves, holding an entity cluster (Oliver) and a triplet
    cluster (Zeta)."""
    now = [0.0]
    cache = AttractorCache(ttl=300, clock=lambda: now[0])
    _add(store, make_memory, [f"we met Oliver, day {i}" for i in range(3)])
    _zeta(store, make_memory)
    first = cache.get(store, "work", 100)
    assert {a.entity for a in first} == {"oliver", "zeta"}
    assert cache.get(store, "work", 100) is first  # kept
    return cache, now, first


def _entities(found) -> dict[str, int]:
    return {a.entity: len(a.members) for a in found}


def test_a_memory_naming_a_cached_entity_drops_the_cache(store, make_memory, cached) -> None:
    cache, _, first = cached
    _add(store, make_memory, ["we met Oliver again"])
    assert _entities(cache.get(store, "work", 100)) == {"oliver": 4, "zeta": 3}


def test_forgetting_a_memory_naming_a_cached_entity_drops_the_cache(
    store, make_memory, cached
) -> None:
    cache, _, first = cached
    [oliver] = [a for a in first if a.entity == "oliver"]
    store.set_deleted(sorted(oliver.members)[0], 1)
    assert "oliver" not in _entities(cache.get(store, "work", 100))  # two members left


def test_a_triplet_touching_a_cached_entity_drops_the_cache(store, make_memory, cached) -> None:
    cache, _, first = cached
    [note] = _add(store, make_memory, ["one more note, about it"])
    edge = _edge("y", "ZETA", source=note)
    store.add_triplets([edge])
    assert _entities(cache.get(store, "work", 100)) == {"oliver": 3, "zeta": 4}
    again = cache.get(store, "work", 100)
    store.invalidate_triplet(edge, int(time.time() * 1000) - 1)
    assert _entities(cache.get(store, "work", 100)) == {"oliver": 3, "zeta": 3}
    assert cache.get(store, "work", 100) is not again


def test_an_alias_touching_a_cached_entity_drops_the_cache(store, make_memory, cached) -> None:
    cache, _, first = cached
    store.add_alias("work", "Zed", "zed", "zeta")
    second = cache.get(store, "work", 100)
    assert second is not first and second == first
    assert cache.get(store, "work", 100) is second
    store.remove_alias("work", "zed")
    assert cache.get(store, "work", 100) is not second


def test_a_write_elsewhere_keeps_the_cache_until_the_ttl(store, make_memory, cached) -> None:
    cache, now, first = cached
    _add(store, make_memory, [f"a postcard from Paris number {i}" for i in range(4)])
    store.add_triplets([_edge("Quux", "Quuz")])
    store.add_alias("work", "Lutetia", "lutetia", "paris")
    now[0] = 299
    assert cache.get(store, "work", 100) is first  # Paris is not seen yet
    now[0] = 301
    assert _entities(cache.get(store, "work", 100)) == {"paris": 4, "oliver": 3, "zeta": 3}


def test_the_ttl_applies_without_any_write(store, make_memory, cached) -> None:
    cache, now, first = cached
    now[0] = 300
    assert cache.get(store, "work", 100) is not first


def test_a_triplet_under_another_name_of_a_cached_entity_drops_the_cache(
    store, make_memory, cached
) -> None:
    """Zeta's cluster is read under every name of its entity, so an edge written under its
    alias reaches it as one written under Zeta does."""
    cache, _, _ = cached
    store.add_alias("work", "Zed", "zed", "zeta")
    cache.get(store, "work", 100)
    [note] = _add(store, make_memory, ["one more note, about it"])
    store.add_triplets([_edge("y", "Zed", source=note)])
    assert _entities(cache.get(store, "work", 100)) == {"oliver": 3, "zeta": 4}


def test_an_alias_joining_a_cached_clusters_entity_drops_the_cache(store, make_memory) -> None:
    """A cluster around an alias (its edges were stated under that name) gains the edges of
    every name its entity is given later, whichever name the new alias was aimed at."""
    cache = AttractorCache(ttl=300, clock=lambda: 0.0)
    store.add_alias("work", "Zed", "zed", "zeta")
    notes = _add(store, make_memory, [f"a note about the thing, part {i}" for i in range(3)])
    store.add_triplets([_edge("Zed", f"x{i}", source=m) for i, m in enumerate(notes)])
    assert _entities(cache.get(store, "work", 100)) == {"zed": 3}
    more = _add(store, make_memory, [f"another note, number {i}" for i in range(2)])
    store.add_triplets([_edge("Zeus", f"y{i}", source=m) for i, m in enumerate(more)])
    assert _entities(cache.get(store, "work", 100)) == {"zed": 3}  # Zeus is no name of it yet
    store.add_alias("work", "Zeus", "zeus", "zeta")
    assert _entities(cache.get(store, "work", 100)) == {"zed": 5}


def test_the_cache_keeps_only_the_newest_realms(store, make_memory) -> None:
    """A request may name any realm: the cache must not grow with the realms asked about."""
    cache = AttractorCache(ttl=300, clock=lambda: 0.0, max_realms=1)
    _add(store, make_memory, [f"we met Oliver, day {i}" for i in range(3)])
    assert cache.get(store, "work", 100)[0].entity == "oliver"
    _add(store, make_memory, [f"a postcard from Paris number {i}" for i in range(4)])
    assert cache.get(store, "elsewhere", 100) == ()  # cached in place of work
    assert cache.get(store, "work", 100)[0].entity == "paris"  # found again, not kept


def test_refresh_finds_again_what_recalls_ask_for_before_it_expires(store, make_memory) -> None:
    now = [0.0]
    cache = AttractorCache(ttl=300, clock=lambda: now[0])
    _add(store, make_memory, [f"we met Oliver, day {i}" for i in range(3)])
    first = cache.get(store, "work", 100)
    _add(store, make_memory, [f"a postcard from Paris number {i}" for i in range(4)])
    now[0] = 100
    assert cache.refresh(store, ahead_s=150) == 0  # expires at 300: not within 150 s yet
    now[0] = 200
    assert cache.refresh(store, ahead_s=150) == 1
    refreshed = cache.get(store, "work", 100)
    assert refreshed != first and refreshed[0].entity == "paris"  # found at 200, cached
    now[0] = 450
    assert cache.get(store, "work", 100) is refreshed  # still within its new time-to-live
    now[0] = 800  # not asked for since 450, more than a time-to-live ago: left to expire
    assert cache.refresh(store, ahead_s=150) == 0


def test_refresh_with_nothing_cached_builds_nothing(store, monkeypatch) -> None:
    def no_build() -> None:
        raise AssertionError("the link index was asked for")

    monkeypatch.setattr(store, "links", no_build)
    assert AttractorCache().refresh(store, ahead_s=240) == 0
