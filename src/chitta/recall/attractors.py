"""Attractors: the densest clusters of a realm's entity graph (seed 001, Attractor Finding).

A cluster here is the set of memories naming one distinctive entity (store/entities.py).
Its density is how tightly its members hang together beyond that entity: the share of
member pairs that also share another distinctive entity. Its mass is its size times
(1 + density), and the attractors are the ``max_attractors`` clusters of greatest mass —
the realm's recurring, well-connected subjects. The graph lane boosts the activation of
memories inside an attractor's basin by ``basin_boost`` (seed 001: 10 attractors, 1.15×).

Finding them reads the whole realm's entity counts, so the result is cached per realm for
five minutes (seed 001's time-to-live); writes in between are seen when it expires.
Density is measured on at most ``SAMPLE`` members of each cluster, which bounds the work
(at most 50 × 435 pair checks) whatever the realm's size.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chitta.store.links import LinkIndex

MAX_ATTRACTORS = 10  # seed 001 max_attractors
TTL_S = 300.0  # seed 001: attractors are cached for 5 minutes
#: Only the largest clusters are weighed (each costs a pass over its members' entities).
CANDIDATES = 50
#: A cluster needs this many members to attract anything.
MIN_MEMBERS = 3
#: Members of a cluster whose pairs are checked for density (the first by id).
SAMPLE = 30


@dataclass(frozen=True, slots=True)
class Attractor:
    entity: str
    members: frozenset[str]
    density: float  # share of member pairs that also share another entity, 0..1

    @property
    def mass(self) -> float:
        return len(self.members) * (1.0 + self.density)


def find_attractors(
    links: LinkIndex, realm: str, max_df: float, limit: int = MAX_ATTRACTORS
) -> tuple[Attractor, ...]:
    """The ``limit`` heaviest clusters of ``realm`` among entities named by at most
    ``max_df`` memories, heaviest first."""
    counts = links.entity_counts(realm)
    eligible = {e: n for e, n in counts.items() if MIN_MEMBERS <= n <= max_df}
    largest = sorted(eligible, key=lambda e: (-eligible[e], e))[:CANDIDATES]
    found = []
    for entity in largest:
        members = links.named_by(realm, entity)
        sample = sorted(members)[:SAMPLE]
        others = {m: set(links.entities_of(m)) & eligible.keys() - {entity} for m in sample}
        pairs = list(combinations(sample, 2))
        linked = sum(1 for a, b in pairs if others[a] & others[b])
        found.append(Attractor(entity, members, linked / len(pairs) if pairs else 0.0))
    found.sort(key=lambda a: (-a.mass, a.entity))
    return tuple(found[:limit])


class AttractorCache:
    """Attractors per (link index, realm), valid for ``ttl`` seconds."""

    def __init__(self, ttl: float = TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._cache: weakref.WeakKeyDictionary[
            LinkIndex, dict[str, tuple[float, tuple[Attractor, ...]]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, links: LinkIndex, realm: str, max_df: float) -> tuple[Attractor, ...]:
        now = self._clock()
        with self._lock:
            cached = self._cache.get(links, {}).get(realm)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        found = find_attractors(links, realm, max_df)
        with self._lock:
            self._cache.setdefault(links, {})[realm] = (now, found)
        return found
