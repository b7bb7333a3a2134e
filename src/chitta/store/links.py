"""Which live memories name which entities, kept in memory beside the store.

Per realm, the memories that name each entity (store/entities.py), for the graph lane's
spreading activation and its attractors. Derived from the live memories, built from the file
on first use, and kept in step with writes (like the word counts in store/terms.py). The
other links recall follows — the turns around a memory in its episode, a session's newest
memories — are read from indexes in the file (migration 3), so they cost no build.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from chitta.store.entities import entities
from chitta.store.records import Memory


@dataclass(frozen=True, slots=True)
class _Entry:
    realm: str
    entities: tuple[str, ...]


class LinkIndex:
    """Entity postings of the live memories, per realm."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._postings: dict[str, dict[str, set[str]]] = {}  # realm -> entity -> ids
        self._lock = threading.Lock()

    def add(self, memory: Memory) -> None:
        """Link a live memory in (replacing what was known about its id)."""
        entry = _Entry(memory.realm, entities(memory.content))
        with self._lock:
            self._drop(memory.id)
            self._entries[memory.id] = entry
            postings = self._postings.setdefault(entry.realm, {})
            for name in entry.entities:
                postings.setdefault(name, set()).add(memory.id)

    def add_many(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            self.add(memory)

    def remove(self, memory_id: str) -> None:
        """Unlink a memory (forgotten or purged); unknown ids are ignored."""
        with self._lock:
            self._drop(memory_id)

    def _drop(self, memory_id: str) -> None:
        entry = self._entries.pop(memory_id, None)
        if entry is None:
            return
        postings = self._postings.get(entry.realm, {})
        for name in entry.entities:
            members = postings.get(name)
            if members is not None:
                members.discard(memory_id)
                if not members:
                    del postings[name]

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._entries

    def entities_of(self, memory_id: str) -> tuple[str, ...]:
        entry = self._entries.get(memory_id)
        return entry.entities if entry else ()

    def named_by(self, realm: str, entity: str) -> frozenset[str]:
        """The memories of ``realm`` that name ``entity`` (normalised)."""
        with self._lock:
            return frozenset(self._postings.get(realm, {}).get(entity, ()))

    def entity_counts(self, realm: str) -> dict[str, int]:
        """How many memories of ``realm`` name each entity."""
        with self._lock:
            return {name: len(ids) for name, ids in self._postings.get(realm, {}).items()}

    def entity_df(self, realm: str, entity: str) -> int:
        """How many memories of ``realm`` name ``entity``."""
        return len(self._postings.get(realm, {}).get(entity, ()))
