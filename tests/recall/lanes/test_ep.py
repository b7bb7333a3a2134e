"""``ep``: episodes found as wholes by their turns' centroid, then their best turns."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pytest

from chitta.recall.lanes.ep import EpisodeLane
from chitta.store.base import Store
from chitta.store.ids import new_id
from chitta.store.records import Episode, Scope, Source

QUERY = "How did the wedding planning go?"
#: An episode about a wedding in which no turn names it: each turn alone is a weak match.
WEDDING = [
    "We booked the venue by the lake for June",
    "The caterer sent three menus to taste",
    "My dress fitting is on Friday",
    "We picked peonies for the bouquets and the tables",
    "Guests get the invitations next week",
]
#: Episodes about other things, two of them holding one turn that matches better alone than
#: any of the wedding's.
OTHERS = [
    ["The car needs new brakes", "The wedding planning of my neighbours went well",
     "The mechanic charges too much", "The tyres are worn"],
    ["Wedding planning apps are popular now", "The cat sleeps all day",
     "I repainted the fence", "The printer is out of ink"],
    ["The weather was cold today", "We bought boots", "The train was late again",
     "The library closes early on Sundays"],
]  # fmt: skip

Add = Callable[..., list[str]]


@pytest.fixture
def episode(store: Store, make_memory, embedder) -> Add:
    """Store ``texts`` as one episode's turns, with their real vectors; returns their ids."""
    store.bind_model(embedder.identity())

    def add(texts: Sequence[str], realm: str = "work", **fields: object) -> list[str]:
        now = int(time.time() * 1000)
        ep = Episode(new_id(now), realm, "chat", now, None, Source(), now)
        store.add_episodes([ep])
        memories = [make_memory(t, realm=realm, episode_id=ep.id, **fields) for t in texts]
        vectors = embedder.embed(list(texts)).vectors
        store.insert(list(zip(memories, vectors, strict=True)))
        return [m.id for m in memories]

    return add


@pytest.fixture
def ask(context, embedder) -> Callable[..., list[str]]:
    """The lane's ranking (ids) for :data:`QUERY`."""
    vector = embedder.embed([QUERY]).vectors[0]

    def run(lane: EpisodeLane | None = None, **fields: object) -> list[str]:
        ranked = (lane or EpisodeLane()).run(context(query=QUERY, query_vector=vector, **fields))
        return [i for i, _ in ranked]

    return run


def test_the_episode_that_matches_as_a_whole_gives_its_turns(store, episode, ask, embedder):
    wedding = episode(WEDDING)
    for texts in OTHERS:
        episode(texts)
    vector = embedder.embed([QUERY]).vectors[0]
    # No turn of the wedding matches as well alone: the vector lane's best is elsewhere.
    nearest = [i for i, _ in store.vector_search(vector, Scope("work"), len(WEDDING))]
    assert nearest[0] not in wedding and not set(wedding) <= set(nearest)
    assert set(ask(EpisodeLane(episodes=1), depth=len(WEDDING))) == set(wedding)
    # Expanding three episodes keeps the wedding's turns ahead of the other episodes' weak ones.
    found = ask()
    assert set(wedding) <= set(found)
    weak = [i for i in found if i not in wedding][len(OTHERS) - 1 :]
    assert max(found.index(i) for i in wedding) < min(found.index(i) for i in weak)


def test_forgotten_turns_never_come_back(store, episode, ask) -> None:
    wedding = episode(WEDDING)
    for texts in OTHERS:
        episode(texts)
    now = int(time.time() * 1000)
    store.set_deleted(wedding[0], now)
    store.purge(wedding[1])
    found = ask(EpisodeLane(episodes=1), depth=len(WEDDING))
    assert set(found) == set(wedding[2:])
    for memory_id in wedding[2:]:
        store.set_deleted(memory_id, now)
    assert not set(ask()) & set(wedding)
    store.set_deleted(wedding[0], None)  # restored: found again
    assert wedding[0] in ask()


def test_another_realm_or_agent_is_never_returned(store, episode, ask) -> None:
    theirs = episode(WEDDING, realm="elsewhere")
    other_agent = episode(WEDDING, agent_id="a2")
    mine = [i for texts in [WEDDING[:2], *OTHERS] for i in episode(texts, agent_id="a1")]
    found = ask(scope=Scope("work", agent_id="a1"))
    assert found and set(found) <= set(mine)
    assert not set(ask()) & set(theirs)  # the realm alone: still not another realm's
    assert set(other_agent) & set(ask())  # (without the agent, the other agent's is found)


def test_one_episode_or_none_gives_nothing(store, episode, ask, stock) -> None:
    assert ask() == []
    episode(WEDDING)
    assert ask() == []  # the one episode is the whole scope: nothing to choose
    stock(["a turn without a vector", "another"])
    assert ask() == []  # an episode without vectors is not a unit to score


def test_no_query_vector_no_candidates(store, episode, context) -> None:
    episode(WEDDING)
    episode(OTHERS[0])
    assert EpisodeLane().run(context(query=QUERY)) == []
