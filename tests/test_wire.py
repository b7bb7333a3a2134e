"""The reply shapes both ways: what wire.py writes, its readers give back (the Python API
through the daemon is built on them)."""

from __future__ import annotations

import pytest

from chitta.api import Chitta, Remembered
from chitta.recall.result import RecallResult
from chitta.relations.analogy import Analogy
from chitta.relations.service import triplet_from_dict, triplet_to_dict
from chitta.store.records import Source
from chitta.wire import (
    confidence_from_dict,
    memory_from_reply,
    memory_reply,
    remembered_from_dict,
    remembered_to_dict,
    result_from_dict,
    result_to_dict,
)

FACTS = [
    ("We chose SQLite WAL over a custom log because crash recovery comes free", "decision"),
    ("The deploy script lives in ops/deploy.sh and needs the staging token", "ops"),
    ("Alice prefers tabs over spaces in every Python file she writes", "style"),
    ("The nightly backup copies the store to the NAS at three in the morning", "ops"),
]


@pytest.fixture
def stocked(chitta: Chitta) -> Chitta:
    for text, tag in FACTS:
        chitta.remember(text, realm="demo", tags=tag, source=Source(session="s1", file="a.md"),
                        event_time="2026-03-04T05:06:07.089Z")  # fmt: skip
    chitta.remember("Do not run ops/deploy.sh any more: use `tools ship` instead",
                    realm="demo", kind="correction", tags="deploy")  # fmt: skip
    return chitta


def test_a_memory_comes_back_exactly(stocked: Chitta) -> None:
    for memory in stocked.store.iter_memories(include_deleted=True):
        assert memory_from_reply(memory_reply(memory)) == memory
    forgotten = stocked.forget(next(stocked.store.iter_memories()).id)
    assert memory_from_reply(memory_reply(forgotten)) == forgotten


def test_a_recall_comes_back_with_its_hits_scores_confidence_corrections_and_drops(
    stocked: Chitta,
) -> None:
    result = stocked.recall("how do I run deploy.sh?", realm="demo", limit=2)
    assert result.hits and result.corrections and result.dropped  # the test covers them all
    back = result_from_dict(result_to_dict(result))
    assert isinstance(back, RecallResult)
    assert [h.memory for h in back.hits] == [h.memory for h in result.hits]
    for got, want in zip(back.hits, result.hits, strict=True):
        assert got.score == pytest.approx(want.score, abs=1e-6)
        assert got.final == pytest.approx(want.final, abs=1e-6)
        assert got.reason == want.reason and got.lanes.keys() == want.lanes.keys()
        for name, lane in want.lanes.items():
            assert got.lanes[name].rank == lane.rank
            assert got.lanes[name].raw == pytest.approx(lane.raw, abs=1e-6)
            assert got.lanes[name].contribution == pytest.approx(lane.contribution, abs=1e-6)
        assert dict(got.factors) == pytest.approx(dict(want.factors), abs=1e-4)
    assert back.corrections == result.corrections
    assert back.dropped == result.dropped
    c, want_c = back.confidence, result.confidence
    assert (c.band, c.source, c.percent, c.words()) == (
        want_c.band, want_c.source, want_c.percent, want_c.words(),
    )  # fmt: skip
    assert c.calibrated == pytest.approx(want_c.calibrated, abs=1e-4)
    assert c.raw == pytest.approx(want_c.raw, abs=1e-4)
    assert (back.query, back.strategy, back.scope, back.lanes_run, back.candidates) == (
        result.query, result.strategy, result.scope, result.lanes_run, result.candidates,
    )  # fmt: skip
    assert back.turn == result.turn and dict(back.shared) == dict(result.shared)
    assert dict(back.newer) == dict(result.newer)
    # Written again, the rebuilt result says what the first one said, but for the keyword
    # lane's normalised score: the BM25 ceiling it is made with is not on the wire.
    again, first = result_to_dict(back), result_to_dict(result)
    assert [h.pop("kw_norm", None) for h in again["hits"]] == [None] * len(again["hits"])
    assert [h.pop("kw_norm", None) for h in first["hits"]] != [None] * len(first["hits"])
    assert again == first


def test_a_traced_recall_keeps_its_trace(stocked: Chitta) -> None:
    result = stocked.recall("tabs or spaces", realm="demo", trace=True)
    assert result_from_dict(result_to_dict(result)).trace == result.trace


def test_no_confidence_stays_none(stocked: Chitta) -> None:
    result = stocked.recall("tabs", realm="demo", strategy="keyword")
    assert result.confidence is None and confidence_from_dict(None) is None
    assert result_from_dict(result_to_dict(result)).confidence is None


def test_remembered_triplets_and_analogies_come_back(stocked: Chitta) -> None:
    done = Remembered(id="01ABC", deduplicated=True, similarity=0.97, truncated=False)
    assert remembered_from_dict(remembered_to_dict(done)) == done
    burst = Remembered(id="01ABC", deduplicated=True, similarity=0.9, burst=True)
    assert remembered_from_dict(remembered_to_dict(burst)) == burst
    old_reply = {k: v for k, v in remembered_to_dict(done).items() if k != "burst"}
    assert remembered_from_dict(old_reply) == done  # a daemon from before the field
    rel = stocked.relations
    rel.add("Alice", "lives in", "Paris", realm="demo")
    rel.add("Bob", "lives in", "Rome", realm="demo", weight=0.5)
    edge = rel.add("Paris", "is in", "France", realm="demo").triplet
    rel.invalidate(edge.id)
    for t in rel.find(realm="demo", include_invalidated=True):
        assert triplet_from_dict(triplet_to_dict(t)) == t
    found = stocked.recall_analogy("Alice", "Paris", "Bob", realm="demo")
    assert not found.abstained and found.answers
    assert Analogy.from_dict(found.as_dict()) == found
    missing = stocked.recall_analogy("Alice", "Nowhere", "Bob", realm="demo")
    assert missing.abstained and Analogy.from_dict(missing.as_dict()) == missing


def test_a_possibly_outdated_hit_names_its_newer_one_on_the_wire(chitta: Chitta) -> None:
    chitta.remember("My frequent flyer status on United Airlines is Premier Silver", realm="me",
                    event_time="2023-01-05T10:00:00Z")  # fmt: skip
    chitta.remember("I just reached Premier Gold status on United Airlines", realm="me",
                    event_time="2023-06-01T10:00:00Z")  # fmt: skip
    result = chitta.recall("United Airlines status", realm="me")
    assert len(result.newer) == 1
    data = result_to_dict(result)
    assert {h["id"]: h["newer"] for h in data["hits"] if "newer" in h} == dict(result.newer)
    assert dict(result_from_dict(data).newer) == dict(result.newer)
