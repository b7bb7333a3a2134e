"""Lane fixtures: a store of hand-written memories and a context to run a lane in."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pytest

from chitta.recall.lanes.base import LaneContext
from chitta.store.base import Store
from chitta.store.ids import new_id
from chitta.store.records import Episode, Scope, Source

Stock = Callable[..., list[str]]


@pytest.fixture
def stock(store: Store, make_memory) -> Stock:
    """Store ``texts`` as one episode's turns (in order); returns their ids."""

    def add(texts: Sequence[str], **fields: object) -> list[str]:
        now = int(time.time() * 1000)
        episode = Episode(new_id(now), str(fields.get("realm", "work")), "chat", now, None,
                          Source(), now)  # fmt: skip
        store.add_episodes([episode])
        memories = [make_memory(t, episode_id=episode.id, **fields) for t in texts]
        store.insert([(m, None) for m in memories])
        return [m.id for m in memories]

    return add


@pytest.fixture
def context(store: Store) -> Callable[..., LaneContext]:
    """A lane context over realm ``work`` seeded with ``seeds`` (best first)."""

    def make(seeds: Sequence[str] = (), **fields: object) -> LaneContext:
        base = {"query": "q", "terms": (), "query_vector": None, "scope": Scope("work"),
                "depth": 20, "store": store}  # fmt: skip
        return LaneContext(**(base | fields)).with_seeds(seeds)

    return make
