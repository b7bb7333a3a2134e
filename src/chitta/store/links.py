"""Which live memories name which entities, kept in memory beside the store.

Per realm, the memories that name each entity (store/entities.py), for the graph lane's
spreading activation and its attractors. Derived from the live memories, built from the file
on first use, and kept in step with writes (like the word counts in store/terms.py). The
other links recall follows — the turns around a memory in its episode, a session's newest
memories — are read from indexes in the file (migration 4), so they cost no build.

Every write that changes an entity's cluster (a memory naming it added or removed, a triplet
or alias touching it written) bumps that entity's write count (``touch``), so a cache of
clusters (recall/attractors.py) can tell whether a write reached the clusters it holds. The
counts live in a fixed number of slots, by a hash of (realm, entity): they take the same memory
however many entities a long-running process sees, and two entities sharing a slot only make a
cache drop an entry early.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections.abc import Iterable

from chitta.store.entities import entities
from chitta.store.postings import Postings
from chitta.store.records import Memory

#: Write-count slots (see the module docstring): 16,384 counters, 128 KiB.
WRITE_SLOTS = 1 << 14


class LinkIndex:
    """Entity postings of the live memories, keyed (realm, entity)."""

    def __init__(self) -> None:
        self._postings: Postings[tuple[str, str]] = Postings()
        self._lock = threading.Lock()
        self._writes = array("Q", bytes(8 * WRITE_SLOTS))  # writes seen, per slot
        self._realm_writes: dict[str, int] = {}

    def add(self, memory: Memory) -> None:
        """Link a live memory in (replacing what was known about its id)."""
        keys = [(memory.realm, name) for name in entities(memory.content)]
        with self._lock:
            self._bump(self._postings.keys_of(memory.id))
            self._postings.put(memory.id, keys)
            self._bump(keys)

    def add_many(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            self.add(memory)

    def remove(self, memory_id: str) -> None:
        """Unlink a memory (forgotten or purged); unknown ids are ignored."""
        with self._lock:
            self._bump(self._postings.keys_of(memory_id))
            self._postings.drop(memory_id)

    def touch(self, realm: str, names: Iterable[str]) -> None:
        """Count a write to the clusters of ``names`` (entity keys) other than a memory's."""
        with self._lock:
            self._bump([(realm, name) for name in names])

    def writes(self, realm: str, names: Iterable[str]) -> tuple[int, ...]:
        """The write counts of ``names``: equal tuples mean no write reached them between."""
        with self._lock:
            return tuple(self._writes[_slot(realm, name)] for name in names)

    def generation(self, realm: str) -> int:
        """How many entity writes ``realm`` has seen: unchanged means no write at all."""
        with self._lock:
            return self._realm_writes.get(realm, 0)

    def _bump(self, keys: Iterable[tuple[str, str]]) -> None:
        for realm, name in keys:
            self._writes[_slot(realm, name)] += 1
            self._realm_writes[realm] = self._realm_writes.get(realm, 0) + 1

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._postings

    def entities_of(self, memory_id: str) -> tuple[str, ...]:
        return tuple(name for _, name in self._postings.keys_of(memory_id))

    def named_by(self, realm: str, entity: str) -> frozenset[str]:
        """The memories of ``realm`` that name ``entity`` (normalised)."""
        with self._lock:
            return self._postings.ids((realm, entity))

    def entity_counts(self, realm: str) -> dict[str, int]:
        """How many memories of ``realm`` name each entity."""
        with self._lock:
            keys = [key for key in self._postings.posted_keys() if key[0] == realm]
            return {name: self._postings.count((r, name)) for r, name in keys}

    def entity_df(self, realm: str, entity: str) -> int:
        """How many memories of ``realm`` name ``entity``."""
        return self._postings.count((realm, entity))


def _slot(realm: str, name: str) -> int:
    """The write-count slot of an entity: a stable hash (the same in every run, unlike
    ``hash``), so which names share a slot does not change from one process to the next."""
    return zlib.crc32(f"{realm}\0{name}".encode("utf-8", "surrogatepass")) % WRITE_SLOTS
