"""A memory stored without a vector (the daemon's embedding queue under load) is found by its
words at once, listed as waiting, and joins every vector index when its vector is given."""

from __future__ import annotations

from dataclasses import replace

from tests.conftest import memory

from chitta.store.base import Store
from chitta.store.records import Scope

TEXTS = [
    "We chose SQLite WAL over a custom log because crash recovery comes free",
    "The deploy script lives in ops/deploy.sh and needs the VPN",
    "Alice prefers tabs over spaces in Python code",
]


def test_a_memory_without_a_vector_waits_then_joins_every_index(store: Store, embedder) -> None:
    vectors = embedder.embed(TEXTS).vectors
    ms = [memory(t, realm="w") for t in TEXTS]
    store.bind_model(embedder.identity())
    store.insert([(ms[0], vectors[0]), (ms[1], vectors[1])])
    # The indexes are built before the late memory arrives: they must take it in then.
    assert store.sparse_search(vectors[0], Scope("w"), 5)[0][0] == ms[0].id
    assert store.themes().theme_of(ms[0].id) is not None
    store.insert([(ms[2], None)])
    assert store.unembedded(10) == [ms[2].id]
    assert [i for i, _ in store.keyword_search(["tabs"], Scope("w"), 5)] == [ms[2].id]
    assert ms[2].id not in dict(store.vector_search(vectors[2], Scope("w"), 5))
    assert store.set_vectors({ms[2].id: vectors[2]}) == 1
    assert store.unembedded(10) == []
    assert store.vector_search(vectors[2], Scope("w"), 1)[0][0] == ms[2].id
    assert store.sparse_search(vectors[2], Scope("w"), 1)[0][0] == ms[2].id
    assert store.themes().theme_of(ms[2].id) is not None
    assert store.vectors_for([ms[2].id])[ms[2].id].tolist() == vectors[2].tolist()
    # A second vector for it, or one for a memory that does not exist, changes nothing.
    assert store.set_vectors({ms[2].id: vectors[0], "01NOSUCHMEMORY0000000000000": vectors[0]}) == 0
    assert store.vectors_for([ms[2].id])[ms[2].id].tolist() == vectors[2].tolist()


def test_a_forgotten_memory_gets_its_vector_for_when_it_is_restored(store: Store, embedder) -> None:
    [v] = embedder.embed([TEXTS[1]]).vectors
    store.bind_model(embedder.identity())
    m = memory(TEXTS[1], realm="w")
    store.insert([(replace(m, deleted_at=m.created_at), None)])
    assert store.unembedded(10) == [m.id]  # forgotten ones wait too
    assert store.set_vectors({m.id: v}) == 1
    assert store.vector_search(v, Scope("w"), 5) == []
    store.set_deleted(m.id, None)
    assert store.vector_search(v, Scope("w"), 1)[0][0] == m.id


def test_the_oldest_wait_first(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    ms = [memory(f"{t} (note {i})", realm="w") for i, t in enumerate(TEXTS)]
    store.insert([(m, None) for m in reversed(ms)])
    assert store.unembedded(2) == [ms[0].id, ms[1].id]
