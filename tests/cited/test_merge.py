"""The merge: content hashing, weighted RRF over sources, normalising, the floor, numbering."""

from __future__ import annotations

import hashlib

import pytest

from chitta.cited.base import Chunk, SourceReply
from chitta.cited.merge import content_hash, merge, source_stats
from chitta.cited.settings import MergeSettings

SETTINGS = MergeSettings()  # k = 60, min_score = 0.3


def reply(name: str, *texts: str, kind: str = "chitta", scores: list[float] | None = None):
    """A source's reply with ``texts`` at ranks 1, 2, ..."""
    scores = scores or [1.0 - 0.1 * i for i in range(len(texts))]
    chunks = tuple(
        Chunk(source=name, text=t, rank=i, score=s, ref=f"{name}#{i}")
        for i, (t, s) in enumerate(zip(texts, scores, strict=True), start=1)
    )
    return SourceReply(name=name, kind=kind, chunks=chunks, error=None, elapsed_ms=1.0)


def failed(name: str) -> SourceReply:
    return SourceReply(name=name, kind="http", chunks=(), error=f"{name}: down", elapsed_ms=1.0)


def test_content_hash_is_md5_prefix_with_whitespace_folded() -> None:
    assert content_hash("hello world") == hashlib.md5(b"hello world").hexdigest()[:12]
    assert content_hash("hello world") == "5eb63bbbe01e"
    assert content_hash("  hello\n\tworld \n") == content_hash("hello world")
    assert content_hash("Hello world") != content_hash("hello world")  # case is kept


def test_weighted_rrf_sums_over_sources_and_normalises() -> None:
    # a (priority 1.0): X, Y   b (priority 0.5): Y, Z
    replies = [reply("a", "X", "Y"), reply("b", "Y", "Z", kind="markdown")]
    citations = merge(replies, {"a": 1.0, "b": 0.5}, SETTINGS)
    raw_x = 1 / 61
    raw_y = 1 / 62 + 0.5 / 61
    raw_z = 0.5 / 62
    assert [c.content for c in citations] == ["Y", "X", "Z"]
    assert [c.citation_id for c in citations] == [1, 2, 3]
    assert [c.raw_rrf for c in citations] == pytest.approx([raw_y, raw_x, raw_z])
    assert [c.rrf_score for c in citations] == pytest.approx([1.0, raw_x / raw_y, raw_z / raw_y])
    assert citations[0].rrf_score == 1.0
    assert citations[1].rrf_score == pytest.approx(0.67391, abs=1e-5)
    assert citations[2].rrf_score == pytest.approx(0.33152, abs=1e-5)


def test_duplicate_is_shown_from_the_instance_with_the_higher_own_share() -> None:
    # Y: a's share 1/62 = 0.01613 beats b's 0.5/61 = 0.00820, though b ranks it first.
    replies = [reply("a", "X", "Y"), reply("b", "Y\n", "Z", kind="markdown")]
    y = merge(replies, {"a": 1.0, "b": 0.5}, SETTINGS)[0]
    assert (y.source, y.source_kind, y.rank, y.ref) == ("a", "chitta", 2, "a#2")
    assert y.source_score == pytest.approx(0.9)
    assert y.content_hash == content_hash("Y")
    # With equal priorities b's rank 1 is the better instance.
    y = merge(replies, {"a": 1.0, "b": 1.0}, SETTINGS)[0]
    assert (y.source, y.source_kind, y.rank, y.content) == ("b", "markdown", 1, "Y\n")
    assert y.raw_rrf == pytest.approx(1 / 62 + 1 / 61)


def test_same_content_twice_in_one_source_counts_once_at_its_best_rank() -> None:
    citations = merge([reply("a", "X", "Y", "X ")], {"a": 1.0}, SETTINGS)
    assert [c.content for c in citations] == ["X", "Y"]
    assert citations[0].raw_rrf == pytest.approx(1 / 61)
    assert citations[1].rrf_score == pytest.approx((1 / 62) / (1 / 61))


def test_chunks_under_the_floor_are_dropped_before_numbering() -> None:
    replies = [reply("a", "X", "Y"), reply("b", "Y", "Z"), reply("c", "W")]
    citations = merge(replies, {"a": 1.0, "b": 0.5, "c": 0.2}, SETTINGS)
    # W: 0.2/61 / (1/62 + 0.5/61) = 0.1348 < 0.3
    assert [c.content for c in citations] == ["Y", "X", "Z"]
    assert [c.citation_id for c in citations] == [1, 2, 3]
    kept = merge(replies, {"a": 1.0, "b": 0.5, "c": 0.2}, MergeSettings(min_score=0.1))
    assert [(c.citation_id, c.content) for c in kept][-1] == (4, "W")
    assert kept[-1].rrf_score == pytest.approx((0.2 / 61) / (1 / 62 + 0.5 / 61))


def test_k_changes_the_arithmetic() -> None:
    citations = merge([reply("a", "X", "Y")], {"a": 1.0}, MergeSettings(k=1, min_score=0.0))
    assert [c.raw_rrf for c in citations] == pytest.approx([1 / 2, 1 / 3])
    assert citations[1].rrf_score == pytest.approx(2 / 3)


def test_ties_are_ordered_by_rank_then_input_order() -> None:
    replies = [reply("a", "A1", "A2"), reply("b", "B1", "B2")]
    citations = merge(replies, {"a": 1.0, "b": 1.0}, SETTINGS)
    assert [c.content for c in citations] == ["A1", "B1", "A2", "B2"]
    swapped = merge(list(reversed(replies)), {"a": 1.0, "b": 1.0}, SETTINGS)
    assert [c.content for c in swapped] == ["B1", "A1", "B2", "A2"]


def test_failed_and_empty_replies_and_blank_chunks_add_nothing() -> None:
    replies = [failed("down"), reply("a", "X", "   "), reply("empty")]
    citations = merge(replies, {"a": 1.0}, SETTINGS)
    assert [c.content for c in citations] == ["X"]
    assert merge([], {}, SETTINGS) == []


def test_unknown_source_weighs_one_and_zero_weight_scores_zero() -> None:
    citations = merge([reply("a", "X"), reply("b", "Y")], {"a": 0.5}, SETTINGS)
    assert [c.source for c in citations] == ["b", "a"]
    assert citations[1].rrf_score == pytest.approx(0.5)
    # Every weight 0: nothing can be ranked; scores are 0, not a division by zero.
    assert merge([reply("a", "X")], {"a": 0.0}, SETTINGS) == []
    zero = merge([reply("a", "X")], {"a": 0.0}, MergeSettings(min_score=0.0))
    assert [(c.rrf_score, c.raw_rrf) for c in zero] == [(0.0, 0.0)]


def test_source_stats_counts_max_and_mean_including_empty_sources() -> None:
    replies = [
        reply("a", "X", "Y", "Z", scores=[0.9, 0.6, 0.3]),
        failed("down"),
        reply("b", "Q", scores=[12.5]),
    ]
    stats = source_stats(replies)
    assert list(stats) == ["a", "down", "b"]
    assert stats["a"].count == 3
    assert stats["a"].max_score == pytest.approx(0.9)
    assert stats["a"].avg_score == pytest.approx(0.6)
    assert (stats["down"].count, stats["down"].max_score, stats["down"].avg_score) == (0, 0.0, 0.0)
    assert (stats["b"].count, stats["b"].max_score, stats["b"].avg_score) == (1, 12.5, 12.5)
