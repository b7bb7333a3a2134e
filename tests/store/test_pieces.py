"""A memory's pieces' vectors (embed/pieces.py) in the store: kept as float16 rows, replaced
when set again, gone with the memory, dropped with the model they were made by."""

from __future__ import annotations

import numpy as np
from tests.conftest import memory

from chitta.store.base import Store

TEXT = "The ferry leaves at seven. It sails from pier four to the island."


def test_pieces_are_kept_replaced_and_purged_with_their_memory(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    m, other = memory(TEXT), memory("Alice prefers tabs over spaces in Python code")
    vectors = embedder.embed([TEXT, other.content]).vectors
    store.insert([(m, vectors[0]), (other, vectors[1])])
    assert store.pieces_for([m.id, other.id]) == {}
    pieces = embedder.embed(["The ferry leaves at seven.", "It sails from pier four."]).vectors
    assert store.set_pieces({m.id: pieces, "01NOSUCHMEMORY0000000000000": pieces}) == 1
    got = store.pieces_for([m.id, other.id])
    assert list(got) == [m.id] and got[m.id].dtype == np.float16
    np.testing.assert_allclose(got[m.id].reshape(2, -1), pieces, atol=1e-3)
    assert store.set_pieces({m.id: pieces[:1]}) == 1  # set again: replaced
    assert got[m.id].size == 2 * pieces.shape[1] and store.pieces_for([m.id])[m.id].size == (
        pieces.shape[1])  # fmt: skip
    store.purge(m.id)
    assert store.pieces_for([m.id]) == {}


def test_a_new_model_drops_the_old_models_pieces(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    m = memory(TEXT)
    [v] = embedder.embed([TEXT]).vectors
    store.insert([(m, v)])
    store.set_pieces({m.id: embedder.embed(["The ferry leaves at seven."]).vectors})
    store.replace_model(embedder.identity(), {m.id: v})
    assert store.pieces_for([m.id]) == {}
