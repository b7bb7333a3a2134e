"""Hygiene (chitta/hygiene.py): duplicate clusters merged into their best-written member,
reversibly; value conflicts listed, not resolved; a dry run changes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.conftest import memory

from chitta import hygiene
from chitta.api import Chitta
from chitta.errors import BadArgument
from chitta.store.access import AccessRecord
from chitta.store.kinds import Kind
from chitta.store.records import Source

PORT = "The staging database listens on port 5432"


def put(chitta: Chitta, text: str, **fields: object) -> str:
    """Store ``text`` past the write-time gate, as an import does."""
    m = memory(text, realm="d", **fields)
    chitta.store.insert([(m, chitta.embedder.embed([text]).vectors[0])])
    return m.id


def test_a_dry_run_finds_clusters_and_conflicts_and_changes_nothing(chitta: Chitta) -> None:
    a = put(chitta, PORT, tags=("db",), source=Source(session="s1", role="assistant"))
    b = put(chitta, PORT, tags=("staging",), source=Source(session="s2", role="user"))
    c = put(chitta, PORT, access_count=3)
    newer = put(chitta, "The staging database listens on port 5433",
                created_at=memory("x").created_at + 10)  # fmt: skip
    other = put(chitta, "Bob prefers tabs over spaces")
    before = chitta.store.get_many([a, b, c, newer, other])
    found = chitta.hygiene("d", dry_run=True)
    assert found.scanned == 5 and found.run is None
    assert found.merges == (hygiene.Merge(b, tuple(sorted((a, c)))),)  # the user's words kept
    assert [(x.newer, x.older) for x in found.conflicts] == [
        (newer, k) for k in sorted((a, b, c))]  # fmt: skip
    assert found.conflicts[0].roles[0] == ""
    assert chitta.store.get_many([a, b, c, newer, other]) == before


def test_a_run_merges_reversibly(chitta: Chitta) -> None:
    a = put(chitta, PORT, tags=("db",), source=Source(session="s1"))
    b = put(chitta, PORT, tags=("staging",), source=Source(session="s2"),
            confidence=replace(memory("x").confidence, mu=0.9))  # fmt: skip
    for at in (1_000, 2_000):
        chitta.store.record_access(AccessRecord((a,), at))
    chitta.store.record_access(AccessRecord((b,), 3_000))
    kept_before = chitta.store.get(b)
    done = chitta.hygiene("d")
    assert done.merges == (hygiene.Merge(b, (a,)),) and done.run is not None
    kept, merged = chitta.store.get(b), chitta.store.get(a)
    assert merged.superseded_by == b and merged.deleted_at is None
    assert set(kept.tags) == {"db", "staging"}
    assert chitta.store.access_history([b])[b].times == (3_000, 2_000, 1_000)
    assert chitta.store.replication_sessions([b]) == {b: {"s1"}}
    assert [h.memory.id for h in chitta.recall("staging database port", realm="d").hits] == [b]
    assert chitta.hygiene("d").merges == ()  # nothing left to merge
    assert hygiene.runs(chitta.store) == [done.run]
    assert chitta.hygiene_undo(done.run) == 1
    assert chitta.store.get(a).superseded_by is None
    back = chitta.store.get(b)
    assert back.tags == kept_before.tags
    assert hygiene.runs(chitta.store) == []
    with pytest.raises(BadArgument, match="no hygiene run"):
        chitta.hygiene_undo(done.run)


def test_near_copies_that_add_a_fact_or_differ_in_kind_or_scope_are_kept(chitta: Chitta) -> None:
    put(chitta, "Deploys go through ops/deploy.sh with the staging profile")
    put(chitta, "Deploys go through ops/deploy.sh with the staging profile", kind=Kind.CORRECTION)
    put(chitta, "Deploys go through ops/deploy.sh with the staging profile", channel="ops")
    put(chitta, "Deploys go through ops/release.sh with the staging profile")
    assert chitta.hygiene("d", dry_run=True).merges == ()


def test_value_conflicts_need_a_number_on_each_side_and_no_new_name() -> None:
    assert hygiene.conflicts_in_value(PORT, PORT.replace("5432", "5433"))
    assert not hygiene.conflicts_in_value(PORT, PORT + " and 5433")  # one side adds, no clash
    assert not hygiene.conflicts_in_value("Alice runs 5 km daily", "Bob runs 8 km daily")
    assert not hygiene.conflicts_in_value(PORT, "The staging database listens on a port")


def test_the_best_written_member() -> None:
    short, long_ = memory("port 5432"), memory("The staging database listens on port 5432")
    assert hygiene.best_written([short, long_]) == long_
    said = replace(short, source=Source(role="user"))
    assert hygiene.best_written([long_, said]) == said


def test_only_the_newest_runs_are_kept(chitta: Chitta, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hygiene, "MAX_RUNS", 2)
    made = []
    for n in range(3):
        put(chitta, f"Deploys of service {n} go through ops/deploy.sh", tags=("a",))
        put(chitta, f"Deploys of service {n} go through ops/deploy.sh", tags=("b",))
        made.append(chitta.hygiene("d").run)
    assert hygiene.runs(chitta.store) == made[1:]
    assert chitta.store.meta(hygiene.RUN_PREFIX + made[0]) is None
    with pytest.raises(BadArgument, match="no hygiene run"):
        chitta.hygiene_undo(made[0])
