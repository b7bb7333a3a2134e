"""A memory's pieces' vectors (embed/pieces.py) in the store: kept as packed, replaced when
set again, gone with the memory, dropped with the model they were made by."""

from __future__ import annotations

from tests.conftest import memory

from chitta.embed.pieces import pack
from chitta.store.base import Store

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
    store.insert([(m, vectors[0]), (other, vectors[1]), (gone, vectors[2])])
    pieces = pack(embedder.embed(["The ferry leaves at seven.", "It sails from pier 4."]).vectors)
    store.set_pieces({other.id: pieces})
    store.await_pieces([m.id, other.id, gone.id, "01NOSUCHMEMORY0000000000000"])
    assert store.pieces_for([m.id, other.id]) == {other.id: pieces}  # marked: none yet
    assert store.awaiting_pieces(10) == sorted([m.id, gone.id])  # other keeps its pieces
    assert store.awaiting_pieces(1) == [min(m.id, gone.id)]  # oldest first
    store.set_deleted(gone.id, 1)
    assert store.awaiting_pieces(10) == [m.id]  # a forgotten memory is not waited for
    store.set_pieces({m.id: pieces})
    assert store.awaiting_pieces(10) == [] and store.pieces_for([m.id]) == {m.id: pieces}
