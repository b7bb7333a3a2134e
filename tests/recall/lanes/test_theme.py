"""``theme``: themes matched for breadth (stage 1), then their memories (stage 2)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pytest

from chitta.recall.lanes.theme import ThemeLane
from chitta.store.base import Store
from chitta.store.records import Scope

#: Three subjects, each over several memories stored one by one, no episode between them.
GARDEN = [
    "I planted tomatoes and basil in the raised bed",
    "The roses by the fence need pruning in March",
    "Slugs ate half of the lettuce seedlings overnight",
    "We put a compost bin behind the shed for the garden",
]
TRAVEL = [
    "Our flight to Lisbon leaves at seven in the morning",
    "I booked a hotel near the old town for four nights",
    "The train from Lisbon to Porto takes about three hours",
    "Remember to renew the passport before the trip",
]
WORK = [
    "The quarterly report is due on the first Monday of March",
    "Standup moved to half past nine on Tuesdays",
    "The new hire starts on the backend team next week",
    "Budget reviews happen every quarter with finance",
]

Add = Callable[..., list[str]]


@pytest.fixture
def add(store: Store, make_memory, embedder) -> Add:
    """Store ``texts`` with their real vectors; returns their ids."""
    store.bind_model(embedder.identity())

    def put(texts: Sequence[str], **fields: object) -> list[str]:
        memories = [make_memory(t, **fields) for t in texts]
        vectors = embedder.embed(list(texts)).vectors
        store.insert(list(zip(memories, vectors, strict=True)))
        return [m.id for m in memories]

    return put


@pytest.fixture
def ask(context, embedder) -> Callable[..., list[str]]:
    def run(query: str, lane: ThemeLane | None = None, **fields: object) -> list[str]:
        vector = embedder.embed([query]).vectors[0]
        ranked = (lane or ThemeLane()).run(context(query=query, query_vector=vector, **fields))
        return [i for i, _ in ranked]

    return run


def test_a_subject_is_found_as_a_whole(store, add, ask) -> None:
    garden = [i for text in GARDEN for i in add([text])]  # written one at a time
    travel, work = add(TRAVEL), add(WORK)
    found = ask("How is my vegetable garden doing?", ThemeLane(themes=1))
    assert found and set(found) <= set(garden)
    assert not set(found) & set(travel + work)
    both = ask("gardening and holiday plans", depth=20)
    assert set(both) & set(garden) and set(both) & set(travel)  # stage 1 reaches both


def test_forgotten_memories_never_come_back(store, add, ask) -> None:
    garden = add(GARDEN)
    add(TRAVEL)
    query = "How is my vegetable garden doing?"
    assert garden[0] in ask(query)
    now = int(time.time() * 1000)
    store.set_deleted(garden[0], now)
    store.purge(garden[1])
    found = ask(query)
    assert garden[0] not in found and garden[1] not in found and garden[2] in found
    store.set_deleted(garden[0], None)
    assert garden[0] in ask(query)


def test_another_realm_or_agent_is_never_returned(store, add, ask) -> None:
    theirs = add(GARDEN, realm="elsewhere")
    mine = add(GARDEN[:2] + TRAVEL, agent_id="a1")
    other_agent = add(GARDEN[2:], agent_id="a2")
    found = ask("the garden", scope=Scope("work", agent_id="a1"))
    assert found and set(found) <= set(mine)
    assert not set(ask("the garden")) & set(theirs)
    assert set(other_agent) & set(ask("the garden"))


def test_no_vector_or_no_memories_no_candidates(store, add, ask, context) -> None:
    assert ask("the garden") == []
    add(GARDEN)
    assert ThemeLane().run(context(query="the garden")) == []
