"""Links between memories: the turns of an episode and a session's memories (indexed in the
file), and entity postings (kept in memory, in step with writes)."""

from __future__ import annotations

import time
import tracemalloc

from chitta.store.base import Store
from chitta.store.ids import new_id
from chitta.store.records import Episode, Scope, Source


def _episode(store: Store, realm: str = "work") -> str:
    now = int(time.time() * 1000)
    episode = Episode(new_id(now), realm, "chat", now, None, Source(), now)
    store.add_episodes([episode])
    return episode.id


def _turns(store: Store, make_memory, episode: str, texts: list[str], **fields) -> list[str]:
    memories = [make_memory(t, episode_id=episode, **fields) for t in texts]
    store.insert([(m, None) for m in memories])
    return [m.id for m in memories]


def test_neighbours_are_the_turns_around_a_memory_in_its_episode(store, make_memory) -> None:
    other = _turns(store, make_memory, _episode(store), ["elsewhere one", "elsewhere two"])
    ids = _turns(store, make_memory, _episode(store), [f"turn number {i}" for i in range(5)])
    assert store.episode_neighbours(ids[2], 1) == [(ids[1], 1), (ids[3], 1)]
    assert store.episode_neighbours(ids[0], 2) == [(ids[1], 1), (ids[2], 2)]
    assert not set(other) & {n for n, _ in store.episode_neighbours(ids[0], 5)}
    assert store.episode_neighbours("no-such-id", 2) == []


def test_episode_members_are_an_episodes_live_turns_in_the_scope(store, make_memory) -> None:
    first = _episode(store)
    mine = _turns(store, make_memory, first, ["one", "two", "three"], agent_id="a1")
    theirs = _turns(store, make_memory, first, ["four"], agent_id="a2")
    second = _episode(store)
    later = _turns(store, make_memory, second, ["five", "six"], agent_id="a1")
    _turns(store, make_memory, _episode(store, "elsewhere"), ["seven"], realm="elsewhere")
    store.insert([(make_memory("no episode"), None)])
    assert store.episode_members(Scope("work")) == {first: [*mine, *theirs], second: later}
    assert store.episode_members(Scope("work", agent_id="a1")) == {first: mine, second: later}
    store.set_deleted(mine[1], int(time.time() * 1000))
    store.purge(later[0])
    store.purge(later[1])
    assert store.episode_members(Scope("work", agent_id="a1")) == {first: [mine[0], mine[2]]}
    assert store.episode_members(Scope("nowhere")) == {}


def test_forget_restore_and_purge_keep_the_links_in_step(store, make_memory) -> None:
    ids = _turns(store, make_memory, _episode(store),
                 ["we met Oliver today", "then lunch", "saw Oliver again later"])  # fmt: skip
    assert store.links().named_by("work", "oliver") == {ids[0], ids[2]}
    store.set_deleted(ids[1], int(time.time() * 1000))
    assert store.episode_neighbours(ids[0], 1) == [(ids[2], 1)]
    store.set_deleted(ids[1], None)
    assert store.episode_neighbours(ids[0], 1) == [(ids[1], 1)]
    store.purge(ids[2])
    assert store.links().named_by("work", "oliver") == {ids[0]}
    assert ids[2] not in store.links()


def test_an_edited_text_moves_its_entities(store, make_memory) -> None:
    (mid,) = _turns(store, make_memory, _episode(store), ["a trip to Norway"])
    store.links()  # built, then kept in step
    memory = store.get(mid)
    from dataclasses import replace

    store.update(replace(memory, content="a trip to Sweden"))
    assert store.links().named_by("work", "norway") == frozenset()
    assert store.links().named_by("work", "sweden") == {mid}


def test_session_recent_lists_a_sessions_memories_newest_first(store, make_memory) -> None:
    ids = _turns(store, make_memory, _episode(store), ["first note here", "second note here"],
                 source=Source(session="s-1"))  # fmt: skip
    other = Source(session="s-2")
    _turns(store, make_memory, _episode(store), ["other session note"], source=other)
    assert store.session_recent("s-1", 5) == [ids[1], ids[0]]
    assert store.session_recent("s-1", 1) == [ids[1]]
    assert store.session_recent("nobody", 5) == []
    store.set_deleted(ids[1], int(time.time() * 1000))
    assert store.session_recent("s-1", 5) == [ids[0]]


def test_rebuilt_from_the_store_equals_kept_in_step(open_again, make_memory) -> None:
    with open_again() as store:
        store.links()  # built first, then kept in step
        ids = _turns(store, make_memory, _episode(store),
                     ["Oliver went to Bergen", "rain in Bergen", "v2.0 shipped"])  # fmt: skip
        kept = [store.links().entities_of(i) for i in ids]
        kept_names = store.links().named_by("work", "bergen")
    with open_again() as store:
        assert [store.links().entities_of(i) for i in ids] == kept
        assert store.links().named_by("work", "bergen") == kept_names == {ids[0], ids[1]}


def test_write_counts_tell_touched_names_apart_in_bounded_memory() -> None:
    """The counts attractor caches compare: a touched name's count moves, another's does not,
    and a long-running process that touches ever new names does not grow them."""
    from chitta.store.links import LinkIndex

    links = LinkIndex()
    before = links.writes("work", ["zeta", "oliver"])
    links.touch("work", ["zeta"])
    after = links.writes("work", ["zeta", "oliver"])
    assert after[0] != before[0] and after[1] == before[1]
    assert links.writes("home", ["zeta"]) == (0,) and links.generation("work") == 1

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for start in range(0, 200_000, 1000):
            links.touch("work", [f"entity {i}" for i in range(start, start + 1000)])
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 1_000_000  # bytes kept after 200,000 distinct names (a dict kept ~30 MB)
