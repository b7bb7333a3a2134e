"""The turn-vector cache of ``chitta bench locomo --vector-cache``: documents come from it in
the next run, questions never do, and a vector read back is the one the model gave."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.conftest import CountingEmbedder

from chitta.bench.turn_vectors import DocumentCache, cache_file, serving_documents
from chitta.errors import BadArgument


def test_a_second_run_reads_the_turns_from_the_cache(tmp_path: Path, embedder) -> None:
    path = cache_file(tmp_path, embedder.inner.identity())
    turns = ["alice: I moved to Lisbon in May", "bob: the parser fails on empty input"]
    first = DocumentCache(CountingEmbedder(embedder.inner), path)
    with first.documents():
        want = first.embed(turns).vectors
    assert path.is_file() and first.inner.texts == 2
    second = DocumentCache(CountingEmbedder(embedder.inner), path)
    with second.documents():
        got = second.embed([turns[1], "carol: a turn the cache has not seen", turns[0]])
    assert second.inner.texts == 1  # only the new turn reached the model
    np.testing.assert_allclose(got.vectors[[2, 0]], want, atol=1e-6)
    assert (second.hits, second.misses) == (2, 1)


def test_questions_are_always_embedded_by_the_model(tmp_path: Path, embedder) -> None:
    cache = DocumentCache(CountingEmbedder(embedder.inner), tmp_path / "v.npz")
    with serving_documents(cache):
        cache.embed(["where did alice move?"])
    cache.embed(["where did alice move?"])  # outside the block: a question
    assert cache.inner.texts == 2 and cache.hits == 0


def test_the_file_is_named_after_the_model(tmp_path: Path, embedder) -> None:
    path = cache_file(tmp_path, embedder.inner.identity())
    assert path.parent == tmp_path and path.name.startswith("turn-vectors-")
    assert cache_file(tmp_path / "mine.npz", embedder.inner.identity()) == tmp_path / "mine.npz"


def test_a_file_that_is_not_a_cache_is_refused(tmp_path: Path, embedder) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a numpy archive")
    with pytest.raises(BadArgument, match="not a vector cache"):
        DocumentCache(embedder.inner, bad)


def test_two_runs_sharing_a_cache_keep_each_others_vectors(tmp_path: Path, embedder) -> None:
    path = tmp_path / "shared.npz"
    one, two = DocumentCache(embedder.inner, path), DocumentCache(embedder.inner, path)
    with one.documents():
        one.embed(["alice: a turn only the first run embeds"])
    with two.documents():  # read the file before the first run wrote it
        two.embed(["bob: a turn only the second run embeds"])
    third = DocumentCache(CountingEmbedder(embedder.inner), path)
    with third.documents():
        third.embed(
            ["alice: a turn only the first run embeds", "bob: a turn only the second run embeds"]
        )
    assert third.inner.texts == 0
