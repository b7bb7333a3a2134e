"""The PostgreSQL store, method by method, against a real server (conftest.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.errors import MemoryNotFound, ModelMismatch, StoreUnsupported
from chitta.store.access import AccessHistory, AccessRecord
from chitta.store.base import Store
from chitta.store.kinds import Kind
from chitta.store.postgres import PostgresStore
from chitta.store.records import Episode, Memory, Scope, Source, Triplet
from chitta.store.triplets import Bounded

MODEL = ModelIdentity("test-model", 4, "0" * 64)


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def triplet(realm: str, s: str, p: str, o: str, n: int, **kw: object) -> Triplet:
    fields = dict(id=f"T{n:03d}", realm=realm, subject=s, predicate=p, object=o, weight=1.0,
                  valid_from=0, invalidated_at=None, source_memory=None, created_at=n)  # fmt: skip
    return Triplet(**{**fields, **kw})  # type: ignore[arg-type]


def test_it_is_a_store(pg_store: PostgresStore) -> None:
    assert isinstance(pg_store, Store)
    assert (
        "@" not in pg_store.location.split("//")[1].split("/")[0]
        or ":" not in (pg_store.location.split("//")[1].split("@")[0])
    )


def test_memories_round_trip_and_change(pg_store: PostgresStore, make_memory) -> None:
    a = make_memory("Alice deploys on Fridays", tags=("ops", "deploy"),
                    source=Source(session="s1", role="user"), event_time=123)  # fmt: skip
    b = make_memory("Bob reviews the parser", supersedes=None)
    pg_store.insert([(a, unit(1, 0, 0, 0)), (b, None)])
    assert pg_store.get(a.id) == a
    assert pg_store.exists(a.id) and not pg_store.exists("nope")
    assert pg_store.get_many([a.id, b.id, "nope"]) == {a.id: a, b.id: b}
    assert set(pg_store.vectors_for([a.id, b.id])) == {a.id}
    assert pg_store.vectors_for([a.id])[a.id] == pytest.approx(unit(1, 0, 0, 0))
    assert pg_store.existing_ids("memories", [a.id, "x"]) == {a.id}
    with pytest.raises(ValueError):
        pg_store.existing_ids("meta", [a.id])
    changed = replace(a, content="Alice deploys on Mondays", strength=0.2, access_count=99)
    pg_store.update(changed)
    got = pg_store.get(a.id)
    assert got.content == "Alice deploys on Mondays" and got.strength == 0.2
    assert got.access_count == 0  # the access log's
    assert pg_store.update_many([replace(b, tier="warm")]) == 1
    assert pg_store.get(b.id).tier == "warm"
    with pytest.raises(MemoryNotFound):
        pg_store.update(replace(a, id="missing"))
    forgotten = pg_store.set_deleted(a.id, 777)
    assert forgotten.deleted_at == 777
    with pytest.raises(MemoryNotFound, match="forgotten"):
        pg_store.get(a.id)
    assert pg_store.get(a.id, include_deleted=True).deleted_at == 777
    assert pg_store.get_many([a.id]) == {}
    assert pg_store.set_deleted(a.id, None).deleted_at is None
    pg_store.purge(b.id)
    with pytest.raises(MemoryNotFound, match="does not exist"):
        pg_store.get(b.id)
    with pytest.raises(MemoryNotFound):
        pg_store.purge(b.id)
    assert pg_store.integrity_check() == "ok"


def test_superseding_marks_the_old_memory(pg_store: PostgresStore, make_memory) -> None:
    old = make_memory("the port is 8080")
    pg_store.insert([(old, None)])
    new = make_memory("the port is 9090", supersedes=old.id)
    pg_store.insert([(new, None)])
    assert pg_store.get(old.id).superseded_by == new.id
    pg_store.purge(new.id)
    assert pg_store.get(old.id).superseded_by is None


def test_iter_memories_in_id_order_by_realm(pg_store: PostgresStore, make_memory) -> None:
    ms = [make_memory(f"memory {i}", realm="a" if i % 2 else "b") for i in range(7)]
    pg_store.insert([(m, None) for m in ms])
    pg_store.set_deleted(ms[0].id, 1)
    assert [m.id for m in pg_store.iter_memories(batch=2)] == sorted(m.id for m in ms[1:])
    assert [m.id for m in pg_store.iter_memories(realm="a", batch=2)] == [
        m.id for m in ms if m.realm == "a"
    ]
    every = list(pg_store.iter_memories(include_deleted=True, batch=3))
    assert len(every) == 7


def test_meta_and_model(pg_store: PostgresStore) -> None:
    pg_store.set_meta("k", "v")
    assert pg_store.meta("k") == "v"
    pg_store.set_meta("k", "w")
    assert pg_store.meta_items()["k"] == "w"
    pg_store.delete_meta("k")
    assert pg_store.meta("k") is None
    assert pg_store.model_identity() is None
    pg_store.bind_model(MODEL)
    pg_store.bind_model(MODEL)
    assert pg_store.model_identity() == MODEL
    with pytest.raises(ModelMismatch, match="reembed"):
        pg_store.bind_model(ModelIdentity("other", 4, "1" * 64))


def test_replace_model_swaps_vectors_and_dimension(pg_store: PostgresStore, make_memory) -> None:
    pg_store.bind_model(MODEL)
    m = make_memory("one")
    pg_store.insert([(m, unit(1, 0, 0, 0))])
    wider = ModelIdentity("wider", 3, "2" * 64)
    pg_store.replace_model(wider, {m.id: unit(0, 1, 0)})
    assert pg_store.model_identity() == wider
    assert pg_store.vectors_for([m.id])[m.id] == pytest.approx(unit(0, 1, 0))
    assert pg_store.vector_search(unit(0, 1, 0), Scope("work"), 1)[0][0] == m.id


def test_vector_search_scopes_and_lanes(pg_store: PostgresStore, make_memory) -> None:
    pg_store.bind_model(MODEL)
    a = make_memory("a", agent_id="ann")
    b = make_memory("b", agent_id="bob")
    c = make_memory("c", realm="other")
    d = make_memory("d", deleted_at=5)
    pg_store.insert([(a, unit(1, 0, 0, 0)), (b, unit(1, 1, 0, 0)), (c, unit(1, 0, 1, 0)),
                     (d, unit(1, 0, 0, 0))])  # fmt: skip
    assert pg_store.vector_count() == 3
    found = pg_store.vector_search(unit(1, 0, 0, 0), Scope("work"), 5)
    assert [i for i, _ in found] == [a.id, b.id]
    assert found[0][1] == pytest.approx(1.0, abs=1e-6)
    assert found[1][1] == pytest.approx(np.sqrt(0.5), abs=1e-6)
    assert pg_store.vector_search(unit(1, 0, 0, 0), Scope("work", agent_id="bob"), 5)[0][0] == b.id
    assert pg_store.vector_search(unit(1, 0, 0, 0), Scope("none"), 5) == []
    assert pg_store.vector_search(unit(1, 0, 0, 0), Scope("work"), 0) == []
    among = pg_store.vector_search_among(unit(0, 1, 0, 0), [a.id, b.id, d.id, "x"], 5)
    assert [i for i, _ in among] == [b.id, a.id]
    assert [i for i, _ in pg_store.vector_search_elsewhere(unit(1, 0, 0, 0), Scope("work"), 5)] == [
        c.id
    ]
    assert pg_store.sparse_search(unit(1, 0, 0, 0), Scope("work"), 5)[0][0] == a.id


def test_the_hnsw_index_answers_big_realms(pg_url: str, tmp_path: Path, make_memory) -> None:
    rng = np.random.default_rng(7)
    with PostgresStore(pg_url, home=tmp_path, hnsw_min=50) as store:
        store.bind_model(MODEL)
        vectors = rng.normal(size=(300, 4)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ms = [make_memory(f"m{i}", channel="odd" if i % 2 else "even") for i in range(300)]
        store.insert(list(zip(ms, vectors, strict=True)))
        q = vectors[0]
        exact = store.vector_search(q, Scope("work"), 10, exact=True)
        approx = store.vector_search(q, Scope("work"), 10)
        assert len({i for i, _ in exact} & {i for i, _ in approx}) >= 8
        filtered = store.vector_search(q, Scope("work", channel="odd"), 10)
        odd = {m.id for m in ms if m.channel == "odd"}
        assert len(filtered) == 10 and {i for i, _ in filtered} <= odd
        assert [s for _, s in approx] == sorted((s for _, s in approx), reverse=True)


def test_keyword_search_matches_as_fts5_does(pg_store: PostgresStore, make_memory) -> None:
    a = make_memory("Deploying the parser to staging", tags=("deploy",))
    b = make_memory("parse_tags splits the tags", agent_id="bob")
    c = make_memory("Déployer le parseur", realm="other")
    pg_store.insert([(a, None), (b, None), (c, None)])
    assert [i for i, _ in pg_store.keyword_search(["deploys"], Scope("work"), 5)] == [a.id]
    assert [i for i, _ in pg_store.keyword_search(["parse_tags"], Scope("work"), 5)] == [b.id]
    assert pg_store.keyword_search(["tags"], Scope("work", agent_id="ann"), 5) == []
    tagged = pg_store.keyword_search(["deploy"], Scope("work"), 5, column="tags")
    assert [i for i, _ in tagged] == [a.id]
    assert pg_store.keyword_search(["staging"], Scope("work"), 5, column="tags") == []
    assert [i for i, _ in pg_store.keyword_search_elsewhere(["deployer"], Scope("work"), 5)] == [
        c.id
    ]
    assert pg_store.keyword_frequencies(["parser", "tags", "zzz"], "work") == (
        2, {"parser": 1, "tags": 1, "zzz": 0}
    )  # fmt: skip
    assert pg_store.term_matches(["parser", "parse_tags"], [a.id, b.id]) == {
        a.id: {"parser"}, b.id: {"parse_tags"}
    }  # fmt: skip
    pg_store.update(replace(a, content="Shipping the lexer"))
    assert pg_store.keyword_search(["parser"], Scope("work"), 5) == []
    assert [i for i, _ in pg_store.keyword_search(["lexer"], Scope("work"), 5)] == [a.id]
    assert pg_store.integrity_check() == "ok"


def test_term_stats_links_and_corrections_follow_writes(
    pg_store: PostgresStore, make_memory
) -> None:
    a = make_memory("Alice met Bob in Paris")
    pg_store.insert([(a, None)])
    stats, links = pg_store.term_stats(), pg_store.links()
    assert stats.df("work", "paris") == 1 and links.named_by("work", "paris") == {a.id}
    fix = make_memory("Use `deploy.sh` not make", kind=Kind.CORRECTION)
    pg_store.insert([(fix, None)])
    assert pg_store.corrections().lookup({"deploy.sh"}, Scope("work")) == {fix.id: ("deploy.sh",)}
    pg_store.set_deleted(a.id, 1)
    assert pg_store.term_stats().df("work", "paris") == 0
    assert pg_store.links().named_by("work", "paris") == frozenset()
    pg_store.purge(fix.id)
    assert pg_store.corrections().lookup({"deploy.sh"}, Scope("work")) == {}


def test_sessions_and_episodes(pg_store: PostgresStore, make_memory) -> None:
    ep = Episode("E1", "work", "standup", 1_000, 2_000, Source(session="s"), 1_000)
    pg_store.add_episodes([ep])
    assert pg_store.episodes() == [ep] and pg_store.episodes("other") == []
    turns = [make_memory(f"turn {i}", episode_id="E1", source=Source(session="s"),
                         event_time=5_000 + i) for i in range(5)]  # fmt: skip
    pg_store.insert([(m, None) for m in turns])
    ids = [m.id for m in turns]
    assert pg_store.session_recent("s", 2) == [ids[4], ids[3]]
    assert pg_store.episode_neighbours(ids[2], 1) == [(ids[1], 1), (ids[3], 1)]
    assert pg_store.episode_neighbours(ids[2], 0) == []
    assert pg_store.scope_oldest(Scope("work")) == 1_000
    assert pg_store.period_ids(Scope("work"), 1_000, 1_001, include_superseded=True) == ids
    assert pg_store.period_ids(Scope("work"), 5_001, 5_003, include_superseded=True,
                               among=[ids[2], ids[0], ids[1]]) == [ids[2], ids[1]]  # fmt: skip
    assert pg_store.period_ids(Scope("work"), 1_000, 1_001, include_superseded=True,
                               limit=3) is None  # fmt: skip
    hits = pg_store.period_keyword_search(["turn"], Scope("work"), 1_000, 1_001, 10,
                                          include_superseded=False)  # fmt: skip
    assert {i for i, _ in hits} == set(ids)  # the episode started in it
    hits = pg_store.period_keyword_search(["turn"], Scope("work"), 5_001, 5_002, 10,
                                          include_superseded=False)  # fmt: skip
    assert [i for i, _ in hits] == [ids[1]]


def test_triplets_and_aliases(pg_store: PostgresStore, make_memory) -> None:
    m = make_memory("Alice lives in Paris")
    pg_store.insert([(m, None)])
    t1 = triplet("work", "Alice", "Lives In", "Paris", 1, source_memory=m.id, weight=0.9)
    t2 = triplet("work", "Alice", "works_at", "Acme", 2, weight=0.5)
    t3 = triplet("work", "Bob", "lives-in", "Paris", 3, valid_from=50)
    pg_store.add_triplets([t1, t2, t3])
    assert pg_store.triplets("work") == [t1, t2, t3] and pg_store.triplet("T002") == t2
    assert pg_store.triplet("nope") is None
    assert pg_store.same_current_triplet("work", ["alice"], "lives_in", ["paris"], 10) == t1
    assert pg_store.find_triplets("work", predicate="lives_in", at=None, limit=5) == [t3, t1]
    assert pg_store.find_triplets("work", predicate="lives_in", at=10, limit=5) == [t1]
    assert pg_store.triplets_between("work", ["alice"], ["paris", "acme"], 10, 5) == Bounded(
        (t1, t2), False
    )
    out = pg_store.triplets_outgoing("work", ["alice"], ["lives_in"], 10, 5)
    assert out.rows == (t1,) and out.keys == (("alice", "lives_in", "paris"),)
    assert pg_store.out_predicates("work", ["alice"], 10) == (["lives_in", "works_at"], False)
    assert pg_store.entity_known("work", ["acme"]) and not pg_store.entity_known("work", ["x"])
    assert pg_store.triplet_hubs("work", 5) == {"alice": 1, "paris": 1}
    assert pg_store.triplets_sourced_by([m.id, "x"], 5) == (
        {m.id: [("alice", "paris", 0.9)]}, False
    )  # fmt: skip
    pg_store.invalidate_triplet(t2, 5)
    assert pg_store.triplet("T002").invalidated_at == 5
    generation = pg_store.links().generation("work")
    pg_store.add_alias("work", "Ally", "ally", "alice", at=7)
    assert pg_store.links().generation("work") > generation  # a write the link caches see
    assert pg_store.canonical("work", "ally") == "alice"
    assert pg_store.canonical_many("work", ["ally", "bob"]) == {"ally": "alice", "bob": "bob"}
    assert pg_store.names_of("work", "ally") == ("alice", "ally")
    assert [a.alias_key for a in pg_store.aliases("work")] == ["ally"]
    near, cut = pg_store.triplet_neighbours("work", ["ally"])
    assert not cut and {end for end, _, _ in near["ally"]} == {"paris"}
    assert pg_store.remove_alias("work", "ally") and not pg_store.remove_alias("work", "ally")
    pg_store.purge(m.id)
    assert pg_store.triplet("T001").source_memory is None


def test_access_history_buffered_then_written(pg_url: str, tmp_path: Path, make_memory) -> None:
    with PostgresStore(pg_url, home=tmp_path, access_every=1000, access_seconds=60) as store:
        a, b = make_memory("a"), make_memory("b")
        store.insert([(a, None), (b, None)])
        store.record_access(AccessRecord((a.id, b.id), 10, (a.id, b.id), 0.25))
        store.record_access(AccessRecord((a.id,), 20))
        assert store.access_history([a.id])[a.id] == AccessHistory((20, 10), 2)
        assert store.co_access([a.id, b.id]) == {tuple(sorted((a.id, b.id))): 0.25}
        assert store.flush_access() == 2
        assert store.access_stats()["written"] == 2
        assert store.access_history([a.id, b.id]) == {
            a.id: AccessHistory((20, 10), 2), b.id: AccessHistory((10,), 1)
        }  # fmt: skip
        assert store.get(a.id).access_count == 2 and store.get(a.id).last_accessed == 20
        assert store.co_neighbours(a.id) == [(b.id, 0.25)]
        store.add_replication(a.id, "s2", 30)
        store.add_replication(a.id, "s2", 31)
        assert store.replication_sessions([a.id, b.id]) == {a.id: {"s2"}}
        store.record_access(AccessRecord((b.id,), 40))
    with PostgresStore(pg_url, home=tmp_path) as again:  # close wrote the buffer
        assert again.access_history([b.id])[b.id] == AccessHistory((40, 10), 2)


def test_figures_and_maintenance(pg_store: PostgresStore, make_memory, tmp_path: Path) -> None:
    pg_store.insert([(make_memory("x"), None), (make_memory("y", deleted_at=3), None)])
    counts = pg_store.counts()
    assert counts["memories"] == 1 and counts["forgotten"] == 1
    assert counts["per_realm"] == {"work": 1} and counts["per_kind"] == {"insight": 1}
    assert pg_store.size_bytes() > 0
    assert pg_store.integrity_check() == "ok"
    with pytest.raises(StoreUnsupported, match="pg_dump"):
        pg_store.backup_to(tmp_path / "b.db")
    with pytest.raises(StoreUnsupported, match="migrate"):
        pg_store.restore_from(tmp_path / "b.db")
    pg_store.close()
    pg_store.close()


def test_the_memory_type_survives(pg_store: PostgresStore, make_memory) -> None:
    m: Memory = make_memory("t", truncated=True, decayed_at=None, last_accessed=None)
    pg_store.insert([(m, None)])
    assert pg_store.get(m.id) == m
