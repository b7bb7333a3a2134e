"""A memory's pieces' vectors (embed/pieces.py) in the store: kept as packed, replaced when
set again, gone with the memory, dropped with the model they were made by."""

from __future__ import annotations

from tests.conftest import memory

from chitta.embed.pieces import pack
from chitta.store.base import Store
from chitta.store.kinds import Kind
from chitta.store.records import Episode, Source

TEXT = "The ferry leaves at seven. It sails from pier four to the island."


def test_pieces_are_kept_replaced_and_purged_with_their_memory(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    m, other = memory(TEXT), memory("Alice prefers tabs over spaces in Python code")
    vectors = embedder.embed([TEXT, other.content]).vectors
    store.insert([(m, vectors[0]), (other, vectors[1])])
    assert store.pieces_for([m.id, other.id]) == {}
    pieces = pack(
        embedder.embed(["The ferry leaves at seven.", "It sails from pier four."]).vectors
    )
    assert store.set_pieces({m.id: pieces, "01NOSUCHMEMORY0000000000000": pieces}) == 1
    assert store.pieces_for([m.id, other.id]) == {m.id: pieces}
    fewer = pack(embedder.embed(["The ferry leaves at seven."]).vectors)
    assert store.set_pieces({m.id: fewer}) == 1  # set again: replaced
    assert store.pieces_for([m.id]) == {m.id: fewer}
    assert store.set_pieces({m.id: pieces, other.id: fewer}) == 2  # a batch in one write
    assert store.pieces_for([m.id, other.id]) == {m.id: pieces, other.id: fewer}
    store.purge(m.id)
    assert store.pieces_for([m.id]) == {}


def test_a_new_model_drops_the_old_models_pieces(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    m = memory(TEXT)
    [v] = embedder.embed([TEXT]).vectors
    store.insert([(m, v)])
    store.set_pieces({m.id: pack(embedder.embed(["The ferry leaves at seven."]).vectors)})
    store.replace_model(embedder.identity(), {m.id: v})
    assert store.pieces_for([m.id]) == {}


def test_a_memory_awaiting_its_pieces_is_marked_until_they_come(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    m, other, gone = memory(TEXT), memory("The ferry is late again"), memory("Pier four shut")
    vectors = embedder.embed([TEXT, other.content, gone.content]).vectors
    store.insert(
        [(m, vectors[0]), (other, vectors[1]), (gone, vectors[2])],
        awaiting_pieces=[m.id, gone.id, "01NOSUCHMEMORY0000000000000"],
    )
    pieces = pack(embedder.embed(["The ferry leaves at seven.", "It sails from pier 4."]).vectors)
    assert store.pieces_for([m.id, other.id, gone.id]) == {}  # marked: none yet
    assert store.awaiting_pieces(10) == sorted([m.id, gone.id])  # other was not marked
    assert store.awaiting_pieces(1) == [min(m.id, gone.id)]  # oldest first
    store.set_deleted(gone.id, 1)
    assert store.awaiting_pieces(10) == [m.id]  # a forgotten memory is not waited for
    store.set_pieces({m.id: pieces})
    assert store.awaiting_pieces(10) == [] and store.pieces_for([m.id]) == {m.id: pieces}


def test_the_turn_before_a_memory_in_its_episode_or_session(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    store.add_episodes(
        [
            Episode(
                id="01EPISODE00000000000000000",
                realm="work",
                title="chat",
                started_at=1,
                ended_at=None,
                source=Source(),
                created_at=1,
            )
        ]
    )
    in_episode = [
        memory(f"Turn {n} of the chat", kind=Kind.EPISODE, episode_id="01EPISODE00000000000000000")
        for n in range(3)
    ]
    in_session = [
        memory(f"Turn {n} of the session", kind=k, source=Source(session="s"))
        for n, k in enumerate([Kind.EPISODE, Kind.INSIGHT, Kind.EPISODE])
    ]
    alone = memory("A turn of no session", kind=Kind.EPISODE)
    [v] = embedder.embed(["a turn"]).vectors
    store.insert([(m, v) for m in [*in_episode, *in_session, alone]], awaiting_pieces=[alone.id])
    store.set_deleted(in_episode[1].id, 1)
    before = store.turns_before([*in_episode, *in_session, alone])
    assert before == {
        in_episode[1].id: in_episode[0].id,
        in_episode[2].id: in_episode[0].id,  # the forgotten one is passed over
        in_session[1].id: in_session[0].id,
        in_session[2].id: in_session[0].id,  # a fact between is not a turn
    }
    store.drop_pieces([alone.id, in_session[0].id])
    assert store.awaiting_pieces(10) == []
