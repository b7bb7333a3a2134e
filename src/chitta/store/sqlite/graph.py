"""Triplets and entity aliases: the realm's knowledge graph (the SQL is triplets.py beside
this module)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from chitta.store.records import Alias, Triplet
from chitta.store.sqlite import triplets as triplet_table
from chitta.store.sqlite.connection import Connection, locked_write
from chitta.store.triplets import NEIGHBOUR_CAP, Bounded, entity_key


class Graph(Connection):
    """Triplets and entity aliases."""

    # --- triplets ------------------------------------------------------------------------------

    @locked_write
    def add_triplets(self, triplets: Sequence[Triplet]) -> None:
        with self.transaction() as conn:
            triplet_table.insert(conn, triplets)
        self._touch_links(triplets)

    def triplets(self, realm: str | None = None) -> list[Triplet]:
        where, params = ("WHERE realm = ?", [realm]) if realm is not None else ("", [])
        rows = self._query(f"SELECT * FROM triplets {where} ORDER BY id", params)
        return [triplet_table.from_row(r) for r in rows]

    def triplet(self, triplet_id: str) -> Triplet | None:
        """The triplet with this id, current or not; None when there is none."""
        return triplet_table.by_id(self._query, triplet_id)

    @locked_write
    def invalidate_triplet(self, triplet: Triplet, at: int) -> None:
        """Mark ``triplet`` invalid from ``at`` on (kept for history)."""
        with self.transaction() as conn:
            triplet_table.invalidate(conn, triplet.id, at)
        self._touch_links([triplet])

    # --- reads by key (store/triplets.py: entity_key, predicate_key) ------------------------

    def same_current_triplet(
        self, realm: str, subjects: Sequence[str], predicate: str, objects: Sequence[str], at: int
    ) -> Triplet | None:
        """A current edge over ``predicate`` (a key) from any of ``subjects`` to any of
        ``objects`` (entity keys), if one exists."""
        return triplet_table.same_current(self._query, realm, subjects, predicate, objects, at)

    def find_triplets(
        self,
        realm: str,
        *,
        subjects: Sequence[str] = (),
        predicate: str | None = None,
        objects: Sequence[str] = (),
        at: int | None,
        limit: int,
    ) -> list[Triplet]:
        """Triplets matching the given keys, newest first: current at ``at``, or all if ``at``
        is None."""
        return triplet_table.find(self._query, realm, subjects=subjects, predicate=predicate,
                                  objects=objects, at=at, limit=limit)  # fmt: skip

    def triplets_between(
        self, realm: str, subjects: Sequence[str], objects: Sequence[str], at: int, cap: int
    ) -> Bounded:
        """Current edges from any of ``subjects`` to any of ``objects`` (keys), heaviest
        first, at most ``cap``."""
        return triplet_table.between(self._query, realm, subjects, objects, at, cap)

    def triplets_outgoing(
        self, realm: str, subjects: Sequence[str], predicates: Sequence[str], at: int, cap: int
    ) -> Bounded:
        """Current edges from ``subjects`` over ``predicates`` (keys): at most ``cap`` per
        subject and predicate, heaviest first, with their keys."""
        return triplet_table.outgoing(self._query, realm, subjects, predicates, at, cap)

    def out_predicates(
        self, realm: str, subjects: Sequence[str], at: int, most: int = 50
    ) -> tuple[list[str], bool]:
        """The predicate keys of the current edges leaving ``subjects``, at most ``most``; and
        whether a bound cut the list."""
        return triplet_table.out_predicates(self._query, realm, subjects, at, most)

    def entity_known(self, realm: str, keys: Sequence[str]) -> bool:
        """Whether any edge of ``realm``, current or not, has one of ``keys`` at either end."""
        return triplet_table.known(self._query, realm, keys)

    def canonical(self, realm: str, key: str) -> str:
        """The entity key ``key`` is an alias of (itself when it is none)."""
        return triplet_table.canonical(self._query, realm, key)

    def canonical_many(self, realm: str, keys: Iterable[str]) -> dict[str, str]:
        """The canonical key of each of ``keys`` (itself when it is no alias)."""
        return triplet_table.canonical_many(self._query, realm, keys)

    def names_of(self, realm: str, key: str) -> tuple[str, ...]:
        """Every key naming the entity ``key`` names (its canonical key first, then its
        aliases)."""
        return triplet_table.names_of(self._query, realm, key)

    # --- aliases ------------------------------------------------------------------------------

    def add_alias(
        self, realm: str, alias: str, alias_key: str, canonical_key: str, at: int | None = None
    ) -> None:
        """Make ``alias_key`` name ``canonical_key`` in ``realm``, created ``at`` (default
        now)."""
        at = int(time.time() * 1000) if at is None else at
        with self._mutex:
            # The entity the alias meant until now loses a name, the one it joins gains one.
            before = triplet_table.names_of(self._query, realm, alias_key)
            with self.transaction() as conn:
                triplet_table.add_alias(conn, realm, alias, alias_key, canonical_key, at)
            after = triplet_table.names_of(self._query, realm, canonical_key)
            self._touch_names(realm, {*before, *after})

    def aliases(self, realm: str | None = None) -> list[Alias]:
        """The aliases of ``realm`` (or of every realm), by realm and alias key."""
        return [Alias(*row) for row in triplet_table.aliases(self._query, realm)]

    def remove_alias(self, realm: str, alias_key: str) -> bool:
        """Forget the alias ``alias_key`` of ``realm``; False when there was none."""
        with self._mutex:
            names = triplet_table.names_of(self._query, realm, alias_key)  # its whole entity
            with self.transaction() as conn:
                meant = triplet_table.remove_alias(conn, realm, alias_key)
            if meant is not None:
                self._touch_names(realm, names)
            return meant is not None

    def triplet_neighbours(
        self, realm: str, names: Iterable[str], cap: int = NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, float, str | None]]], bool]:
        """For each of ``names`` (entity keys), the entities at the other end of the realm's
        current triplets that touch it or one of its aliases, with the edge's weight and
        source memory; at most ``cap`` edges per name and side, heaviest first. The flag says a
        bound cut a read."""
        wanted = sorted(set(names))
        out: dict[str, list[tuple[str, float, str | None]]] = {}
        if not wanted:
            return out, False
        # An entity is every name its aliases give it: read the edges of them all, and lead
        # on to every name of the entity at the other end.
        groups = triplet_table.alias_groups(self._query, realm, wanted)
        asked: dict[str, set[str]] = {}
        for name in wanted:
            for key in groups.get(name, (name,)):
                asked.setdefault(key, set()).add(name)
        now = int(time.time() * 1000)
        read = triplet_table.touching(self._query, realm, sorted(asked), now, cap)
        ends = triplet_table.alias_groups(self._query, realm, (k for ks in read.keys for k in ks))
        for t, (subject, _, obj) in zip(read.rows, read.keys, strict=True):
            for here, there in ((subject, obj), (obj, subject)):
                for name in asked.get(here, ()):
                    for end in ends.get(there, (there,)):
                        out.setdefault(name, []).append((end, t.weight, t.source_memory))
        return out, read.cut

    def triplet_hubs(self, realm: str, limit: int) -> dict[str, int]:
        """Entity keys with the most source memories over the realm's newest current
        triplets (store/triplets.py ``hubs``: a bounded window)."""
        return triplet_table.hubs(self._query, realm, int(time.time() * 1000), limit)

    def triplets_sourced_by(
        self, memory_ids: Sequence[str], cap: int = NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, str, float]]], bool]:
        """Per memory, the current triplets it states: (subject key, object key, weight), at
        most ``cap`` each, heaviest first; and whether a memory had more."""
        return triplet_table.sourced_by(self._query, memory_ids, int(time.time() * 1000), cap)

    def _touch_links(self, triplets: Iterable[Triplet]) -> None:
        """Tell the link index which entities a committed triplet write changed (attractor
        caches): both ends, under every name their aliases give them."""
        if self._links is None:
            return
        ends: dict[str, set[str]] = {}
        for t in triplets:
            keys = (entity_key(t.subject), entity_key(t.object))
            ends.setdefault(t.realm, set()).update(keys)
        for realm, keys in ends.items():
            groups = triplet_table.alias_groups(self._query, realm, keys)
            self._touch_names(realm, {name for k in keys for name in groups.get(k, (k,))})

    def _touch_names(self, realm: str, names: Iterable[str]) -> None:
        """Count a write to the clusters of ``names`` (entity keys) once it is committed: a
        cluster is read under every name of its entity, so a write under any of them counts;
        and a reader that finds the count changed can see the write in the file."""
        if self._links is not None:
            self._links.touch(realm, names)
