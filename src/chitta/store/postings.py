"""An inverted index kept consistent both ways: the keys of each id, the ids of each key.

The in-memory indexes beside the store (entities in store/links.py, correction keys in
store/corrections.py) post a memory under several keys and must take it out of exactly those
keys when it is forgotten, purged or changed. Not thread-safe: each owner holds its own lock.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class Postings(Generic[K]):
    """ids posted under keys; an id's keys are replaced as a whole."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[K, ...]] = {}
        self._ids: dict[K, set[str]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._keys

    def put(self, item_id: str, keys: Iterable[K]) -> None:
        """Post ``item_id`` under ``keys`` (and under no key it was posted under before)."""
        self.drop(item_id)
        posted = tuple(dict.fromkeys(keys))
        self._keys[item_id] = posted
        for key in posted:
            self._ids.setdefault(key, set()).add(item_id)

    def drop(self, item_id: str) -> None:
        """Take ``item_id`` out of every key; an unknown id is ignored."""
        for key in self._keys.pop(item_id, ()):
            ids = self._ids.get(key)
            if ids is not None:
                ids.discard(item_id)
                if not ids:
                    del self._ids[key]

    def keys_of(self, item_id: str) -> tuple[K, ...]:
        return self._keys.get(item_id, ())

    def ids(self, key: K) -> frozenset[str]:
        return frozenset(self._ids.get(key, ()))

    def count(self, key: K) -> int:
        return len(self._ids.get(key, ()))

    def posted_keys(self) -> Iterator[K]:
        """Every key with at least one id."""
        return iter(self._ids)
