"""Every abstention rule of seed 003, with its reason text, and the order they are checked in."""

from __future__ import annotations

from chitta.cited.abstain import (
    NO_RESULTS,
    STORE_UNKNOWN,
    model_abstention,
    pre_synthesis,
)
from chitta.cited.base import Chunk, SourceReply
from chitta.cited.merge import merge
from chitta.cited.settings import AbstainSettings, MergeSettings

RULES = AbstainSettings()  # min_sources 2, min_chunks 2, min_top_score 0.3
MERGE = MergeSettings()  # k 60, min_score 0.3


def reply(name: str, *texts: str) -> SourceReply:
    chunks = tuple(Chunk(name, t, i, 1.0 / i) for i, t in enumerate(texts, start=1))
    return SourceReply(name, "chitta", chunks, None, 1.0)


def failed(name: str) -> SourceReply:
    return SourceReply(name, "http", (), f"{name}: timed out after 5s", 5000.0)


def decide(replies, priorities=None, merge_settings=MERGE, rules=RULES):
    priorities = priorities or {r.name: 1.0 for r in replies}
    return pre_synthesis(replies, merge(replies, priorities, merge_settings), rules)


def test_enough_evidence_does_not_abstain() -> None:
    assert decide([reply("a", "X", "Y"), reply("b", "Z")]) is None


def test_no_results_from_any_source() -> None:
    assert decide([reply("a"), failed("b")]) == "No results from any memory store."
    assert decide([]) == NO_RESULTS


def test_too_few_sources_with_results() -> None:
    replies = [reply("a", "X", "Y"), reply("b"), failed("c")]
    assert decide(replies) == "Insufficient sources (1 < 2). Only one source returned results."
    rules = AbstainSettings(min_sources=3)
    replies = [reply("a", "X"), reply("b", "Y"), failed("c"), reply("d")]
    assert decide(replies, rules=rules) == (
        "Insufficient sources (2 < 3). Only 2 sources returned results."
    )


def test_sources_rule_counts_only_sources_configured() -> None:
    # One source configured: min(2, 1) = 1 source with results is enough.
    assert decide([reply("a", "X", "Y")]) is None
    rules = AbstainSettings(min_sources=5)
    assert decide([reply("a", "X"), reply("b", "Y")], rules=rules) is None


def test_top_score_under_the_threshold_when_the_merge_keeps_nothing() -> None:
    # Chunks were found but every source weighs 0: no chunk reaches the floor.
    replies = [reply("a", "X", "Y"), reply("b", "Z")]
    assert decide(replies, priorities={"a": 0.0, "b": 0.0}) == (
        "Low relevance scores (top RRF score: 0.00 < 0.3)."
    )
    # A floor above 1 keeps nothing either.
    assert decide(replies, merge_settings=MergeSettings(min_score=1.5)) == (
        "Low relevance scores (top RRF score: 0.00 < 0.3)."
    )


def test_top_score_under_a_threshold_above_one() -> None:
    # After max-normalisation the best score is 1.0; only a threshold above it fires.
    rules = AbstainSettings(min_top_score=1.5)
    assert decide([reply("a", "X", "Y"), reply("b", "Z")], rules=rules) == (
        "Low relevance scores (top RRF score: 1.00 < 1.5)."
    )


def test_too_few_chunks_counts_distinct_evidence() -> None:
    # Two sources, two chunks returned, but the same passage: one piece of evidence.
    assert decide([reply("a", "X"), reply("b", "X")]) == "Insufficient evidence (1 < 2 chunks)."
    assert decide([reply("a", "X", "Y")], rules=AbstainSettings(min_chunks=3)) == (
        "Insufficient evidence (2 < 3 chunks)."
    )


def test_rules_are_checked_in_the_seeds_order() -> None:
    # One source with one chunk breaks both the sources and the chunks rule: sources first.
    replies = [reply("a", "X"), reply("b")]
    assert decide(replies).startswith("Insufficient sources (1 < 2)")
    # Nothing kept and one chunk short: the score rule comes before the chunks rule.
    assert decide([reply("a", "X"), reply("b", "Y")], priorities={"a": 0.0, "b": 0.0}).startswith(
        "Low relevance scores"
    )


def test_model_abstention_reason() -> None:
    assert model_abstention("NO_ANSWER_AVAILABLE: the notes never mention Postgres") == (
        "the notes never mention Postgres"
    )
    assert model_abstention('"NO_ANSWER_AVAILABLE: nothing about that."') == "nothing about that."
    assert model_abstention("I am not sure.\nNO_ANSWER_AVAILABLE:   too vague  ") == "too vague"
    assert model_abstention("NO_ANSWER_AVAILABLE:") == "no reason given"
    assert model_abstention("NO_ANSWER_AVAILABLE") == "no reason given"
    assert model_abstention("We chose Postgres [1].") is None


def banded(name: str, band: str, *texts: str, kind: str = "chitta") -> SourceReply:
    chunks = tuple(Chunk(name, t, i, 1.0 / i, meta={"band": band})
                   for i, t in enumerate(texts, start=1))  # fmt: skip
    return SourceReply(name, kind, chunks, None, 1.0)


def test_only_stores_that_say_unknown_abstain() -> None:
    """chitta's rule beside the seed's: every chunk from a chitta store, each UNKNOWN."""
    unknown = [banded("memory", "UNKNOWN", "X", "Y"), banded("other", "UNKNOWN", "Z",
                                                            kind="chitta_file")]  # fmt: skip
    assert decide(unknown) == STORE_UNKNOWN
    # One store that knows, or any other source with results, is evidence enough to go on.
    assert decide([banded("memory", "UNKNOWN", "X", "Y"), banded("o", "KNOWN", "Z")]) is None
    notes = SourceReply("notes", "markdown", (Chunk("notes", "W", 1, 2.0),), None, 1.0)
    assert decide([banded("memory", "UNKNOWN", "X", "Y"), notes]) is None
    # Switched off, the seed's rules alone decide.
    assert decide(unknown, rules=AbstainSettings(respect_band=False)) is None


def test_the_seed_rules_are_reported_before_the_band_rule() -> None:
    only = [banded("memory", "UNKNOWN", "X")]
    assert decide(only) == "Insufficient evidence (1 < 2 chunks)."
