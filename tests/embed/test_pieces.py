"""A memory's pieces: its sentences, with the memory's label, embedded beside its whole."""

from __future__ import annotations

import numpy as np
from tests.conftest import CountingEmbedder

from chitta.embed.pieces import (
    MAX_PIECES,
    best_cosine,
    embed_pieces,
    pack,
    pieces_by_id,
    pieces_of,
)

TEAM = ("Quick update from the team sync. The release slipped a week because QA found flaky "
        "tests. Also, we decided to move the billing service from MySQL to PostgreSQL next "
        "quarter. Lunch is on Friday.")  # fmt: skip


def test_the_sentences_of_three_words_or_more_are_the_pieces() -> None:
    assert pieces_of(TEAM) == [
        "Quick update from the team sync.",
        "The release slipped a week because QA found flaky tests.",
        "Also, we decided to move the billing service from MySQL to PostgreSQL next quarter.",
        "Lunch is on Friday.",
    ]
    assert pieces_of("Thanks! See you at the ferry tomorrow morning. Bye.") == []  # one left


def test_a_memory_of_one_sentence_has_none() -> None:
    assert (
        pieces_of("We chose SQLite WAL over a custom log because crash recovery comes free") == []
    )
    assert pieces_of("") == []


def test_each_piece_keeps_the_label_and_a_caption_is_a_piece() -> None:
    text = ("Melanie: I just signed up for a pottery class. It is like therapy for me. "
            "[image: a photo of a bowl with a flower pattern]")  # fmt: skip
    assert pieces_of(text) == [
        "Melanie: I just signed up for a pottery class.",
        "Melanie: It is like therapy for me.",
        "Melanie: [image: a photo of a bowl with a flower pattern]",
    ]


def test_a_long_text_gives_its_first_pieces_only() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(MAX_PIECES + 10))
    found = pieces_of(text)
    assert len(found) == MAX_PIECES and found[-1] == f"Sentence number {MAX_PIECES - 1} is here."


def test_every_piece_is_embedded_in_one_call_as_it_would_be_alone(embedder) -> None:
    model = CountingEmbedder(embedder)
    one = "We chose SQLite WAL over a custom log because crash recovery comes free"
    two = "The ferry leaves at seven. It sails from pier four to the island."
    got = embed_pieces(model, [TEAM, one, two])
    assert model.calls == 1
    assert got[1] is None
    for text, vectors in ((TEAM, got[0]), (two, got[2])):
        alone = embedder.embed(pieces_of(text)).vectors
        assert vectors is not None and vectors.shape == alone.shape
        np.testing.assert_allclose(vectors, alone, atol=1e-5)
    assert list(pieces_by_id(model, [("a", one), ("b", two)])) == ["b"]
    assert embed_pieces(model, [one]) == [None] and model.calls == 2  # nothing to embed


def test_packed_pieces_give_the_best_cosine_within_quantisation(embedder) -> None:
    vectors = embedder.embed(pieces_of(TEAM)).vectors
    packed = pack(vectors)
    assert len(packed) == len(vectors) * (vectors.shape[1] + 4)  # a quarter of float32's
    for query in ("did we decide to migrate billing", "when is lunch", "flaky tests"):
        q = embedder.embed([query]).vectors[0]
        assert abs(best_cosine(packed, q) - float((vectors @ q).max())) < 0.002
    assert best_cosine(pack(np.zeros((1, 4), dtype=np.float32)), np.ones(4) / 2) == 0.0
    assert best_cosine(b"", q) == -1.0  # a blob too short for one row counts for nothing
