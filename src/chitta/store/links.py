"""How live memories are linked to each other, kept in memory beside the store.

Three kinds of link, each derived from the memories themselves and rebuilt from the file on
first use, then kept in step with writes (like the word counts in store/terms.py):

- **episode order**: the memories of one episode (a session of turns) in the order they were
  made, so recall can look at the turns around a hit;
- **session order**: the memories whose source names one agent session, newest last;
- **entities**: per realm, which memories name each entity (store/entities.py).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from chitta.store.entities import entities
from chitta.store.records import Memory


@dataclass(frozen=True, slots=True)
class _Entry:
    realm: str
    episode: str | None
    session: str | None
    entities: tuple[str, ...]


class LinkIndex:
    """Episode and session order and entity postings of the live memories."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._episodes: dict[str, list[str]] = {}  # episode id -> member ids, ascending
        self._sessions: dict[str, list[str]] = {}  # session -> member ids, ascending
        self._postings: dict[str, dict[str, set[str]]] = {}  # realm -> entity -> ids
        self._lock = threading.Lock()

    def add(self, memory: Memory) -> None:
        """Link a live memory in (replacing what was known about its id)."""
        entry = _Entry(memory.realm, memory.episode_id, memory.source.session,
                       entities(memory.content))  # fmt: skip
        with self._lock:
            self._drop(memory.id)
            self._entries[memory.id] = entry
            # Ids are ULIDs: ascending id is the order the memories were made in.
            if entry.episode is not None:
                bisect.insort(self._episodes.setdefault(entry.episode, []), memory.id)
            if entry.session is not None:
                bisect.insort(self._sessions.setdefault(entry.session, []), memory.id)
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
        for key, lists in ((entry.episode, self._episodes), (entry.session, self._sessions)):
            if key is not None and (ids := lists.get(key)):
                at = bisect.bisect_left(ids, memory_id)
                if at < len(ids) and ids[at] == memory_id:
                    del ids[at]
                if not ids:
                    del lists[key]
        postings = self._postings.get(entry.realm, {})
        for name in entry.entities:
            members = postings.get(name)
            if members is not None:
                members.discard(memory_id)
                if not members:
                    del postings[name]

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._entries

    def neighbours(self, memory_id: str, span: int) -> list[tuple[str, int]]:
        """The memories within ``span`` places of ``memory_id`` in its episode, with their
        distance (1 = the turn just before or after)."""
        entry = self._entries.get(memory_id)
        if entry is None or entry.episode is None:
            return []
        with self._lock:
            ids = self._episodes.get(entry.episode, [])
            at = bisect.bisect_left(ids, memory_id)
            lo, hi = max(0, at - span), min(len(ids), at + span + 1)
            return [(ids[i], abs(i - at)) for i in range(lo, hi) if i != at]

    def session_recent(self, session: str, n: int) -> list[str]:
        """The ``n`` newest memories stored in ``session``, newest first."""
        with self._lock:
            return list(reversed(self._sessions.get(session, [])[-n:]))

    def entities_of(self, memory_id: str) -> tuple[str, ...]:
        entry = self._entries.get(memory_id)
        return entry.entities if entry else ()

    def realm_of(self, memory_id: str) -> str | None:
        entry = self._entries.get(memory_id)
        return entry.realm if entry else None

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
