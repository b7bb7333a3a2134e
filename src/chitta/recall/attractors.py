"""Attractors: the densest clusters of a realm's entity and triplet graph (seed 001,
Attractor Finding).

A cluster gathers around one entity: the memories that name it (store/entities.py) and the
memories that state a current triplet touching it (its source memories). Its density is how
tightly its members hang together beyond that entity: the share of member pairs that also
share another entity, or that name two entities a current triplet joins. Its mass is its size
times (1 + density), and the attractors are the ``max_attractors`` clusters of greatest mass:
the realm's recurring, well-connected subjects. The graph lane boosts the activation of
memories inside an attractor's basin by ``basin_boost`` (seed 001: 10 attractors, 1.15×).

Finding them reads the realm's entity counts and its busiest triplet ends, so the result is
cached per realm for five minutes (seed 001's time-to-live) and dropped sooner when a write
reaches one of the cached clusters: a memory naming its entity added or forgotten, a triplet
or alias touching it written (the link index counts those writes). A write elsewhere is seen
when the entry expires. Density is measured on at most ``SAMPLE`` members of each cluster, over
the triplets of at most ``DENSITY_ENTITIES`` of their entities, and triplets are read a bounded
number per entity, which bounds the work whatever the realm's size.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chitta.store.base import Store
    from chitta.store.links import LinkIndex

MAX_ATTRACTORS = 10  # seed 001 max_attractors
TTL_S = 300.0  # seed 001: attractors are cached for 5 minutes
#: Realms cached at once per store; the one cached longest ago is dropped first (a request
#: may name any realm, so the cache must not grow with the realms asked about).
MAX_REALMS = 256
#: Only the largest clusters are weighed (each costs a pass over its members' entities).
CANDIDATES = 50
#: A cluster needs this many members to attract anything.
MIN_MEMBERS = 3
#: Members of a cluster whose pairs are checked for density (the first by id).
SAMPLE = 30
#: Triplets read per entity and side when gathering a cluster's members.
EDGES_PER_ENTITY = 200
#: Entities whose triplets count towards density (those named by the most sampled members),
#: and the triplets read for each: the density read's bound.
DENSITY_ENTITIES = 300
DENSITY_EDGES = 50


@dataclass(frozen=True, slots=True)
class Attractor:
    entity: str
    members: frozenset[str]
    density: float  # share of member pairs linked beyond the entity, 0..1

    @property
    def mass(self) -> float:
        return len(self.members) * (1.0 + self.density)


def find_attractors(
    store: Store, realm: str, max_df: float, limit: int = MAX_ATTRACTORS
) -> tuple[Attractor, ...]:
    """The ``limit`` heaviest clusters of ``realm`` among entities named by at most
    ``max_df`` memories, heaviest first."""
    links = store.links()
    counts = links.entity_counts(realm)
    hubs = store.triplet_hubs(realm, CANDIDATES)
    sizes = {e: counts.get(e, 0) + hubs.get(e, 0) for e in counts.keys() | hubs.keys()}
    eligible = {e for e, n in sizes.items() if n >= MIN_MEMBERS and counts.get(e, 0) <= max_df}
    largest = sorted(eligible, key=lambda e: (-sizes[e], e))[:CANDIDATES]
    edges, _ = store.triplet_neighbours(realm, largest, EDGES_PER_ENTITY) if hubs else ({}, False)
    clusters = {}
    for entity in largest:
        sourced = {m for _, _, m in edges.get(entity, ()) if m is not None}
        members = frozenset(links.named_by(realm, entity) | sourced)
        if len(members) >= MIN_MEMBERS:
            clusters[entity] = members
    samples = {e: sorted(members)[:SAMPLE] for e, members in clusters.items()}
    named = {m: set(links.entities_of(m)) & eligible for sample in samples.values() for m in sample}
    # One read of triplets for all clusters, bounded: the entities the most sampled members
    # name (a realm with many stated edges had thousands of them, and a refresh took seconds).
    often = Counter(n for ns in named.values() for n in ns) if hubs else Counter()
    read = sorted(often, key=lambda n: (-often[n], n))[:DENSITY_ENTITIES]
    joined, _ = store.triplet_neighbours(realm, read, DENSITY_EDGES)
    found = [
        Attractor(e, members, _density(samples[e], e, named, joined))
        for e, members in clusters.items()
    ]
    found.sort(key=lambda a: (-a.mass, a.entity))
    return tuple(found[:limit])


def _density(
    sample: list[str],
    entity: str,
    named: Mapping[str, set[str]],
    joined: Mapping[str, list[tuple[str, float, str | None]]],
) -> float:
    """The share of ``sample``'s pairs that share an entity besides ``entity``, or name two
    entities a current triplet joins."""
    names = {m: named[m] - {entity} for m in sample}
    reach = {m: ns | {o for n in ns for o, _, _ in joined.get(n, ())} for m, ns in names.items()}
    pairs = list(combinations(sample, 2))
    linked = sum(1 for a, b in pairs if names[a] & reach[b])
    return linked / len(pairs) if pairs else 0.0


@dataclass(frozen=True, slots=True)
class _Entry:
    at: float
    found: tuple[Attractor, ...]
    writes: tuple[int, ...]  # the link index's write counts of the attractors' entities
    max_df: float  # what they were found with
    asked: list[float]  # when a recall last asked for them (one item: set in place)


class AttractorCache:
    """Attractors per (link index, realm), valid for ``ttl`` seconds or until a write reaches
    one of their clusters."""

    def __init__(
        self,
        ttl: float = TTL_S,
        clock: Callable[[], float] = time.monotonic,
        max_realms: int = MAX_REALMS,
    ) -> None:
        self._ttl = ttl
        self._max_realms = max_realms
        self._clock = clock
        self._cache: weakref.WeakKeyDictionary[LinkIndex, dict[str, _Entry]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def get(self, store: Store, realm: str, max_df: float) -> tuple[Attractor, ...]:
        links = store.links()
        now = self._clock()
        with self._lock:
            cached = self._cache.get(links, {}).get(realm)
        if (
            cached is not None
            and now - cached.at < self._ttl
            and links.writes(realm, [a.entity for a in cached.found]) == cached.writes
        ):
            cached.asked[0] = now
            return cached.found
        return self._find(store, links, realm, max_df, now)

    def refresh(self, store: Store, ahead_s: float) -> int:
        """Find again the attractors of each realm of ``store`` that a recall asked for
        within the time-to-live and whose entry expires within ``ahead_s`` seconds (the
        daemon's upkeep, subconscious/tasks.py): a recall then finds them cached. How many
        realms were refreshed. Nothing is built: with nothing cached, the store's link
        index is not even asked for."""
        with self._lock:
            if not any(self._cache.values()):
                return 0
        links = store.links()
        now = self._clock()
        with self._lock:
            entries = self._cache.get(links, {}).items()
            due = [(realm, e.max_df, e.asked[0]) for realm, e in entries
                   if now - e.asked[0] < self._ttl
                   and now - e.at >= self._ttl - ahead_s]  # fmt: skip
        for realm, max_df, asked in due:
            self._find(store, links, realm, max_df, now, asked=asked)
        return len(due)

    def _find(
        self,
        store: Store,
        links: LinkIndex,
        realm: str,
        max_df: float,
        now: float,
        *,
        asked: float | None = None,
    ) -> tuple[Attractor, ...]:
        generation = links.generation(realm)
        found = find_attractors(store, realm, max_df)
        writes = links.writes(realm, [a.entity for a in found])
        if links.generation(realm) == generation:  # no write raced the search: keep it
            with self._lock:
                realms = self._cache.setdefault(links, {})
                realms.pop(realm, None)  # re-cached: now the newest
                realms[realm] = _Entry(
                    now, found, writes, max_df, [now if asked is None else asked]
                )
                while len(realms) > self._max_realms:
                    del realms[next(iter(realms))]
        return found
