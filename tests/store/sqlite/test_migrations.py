"""Schema migrations: every old version opens at the latest with its rows intact."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.errors import StoreCorrupt
from chitta.store import triplets as triplet_table
from chitta.store.access import AccessRecord
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Alias, Episode, Memory, Scope, Source, Triplet
from chitta.store.sqlite import Store, migrations

MODEL = ModelIdentity("test-model", 4, "c" * 64)
VECTOR = np.array([0.6, 0.8, 0.0, 0.0], dtype=np.float32)
OLD_MEMORY = Memory(
    id=new_id(1_690_000_000_000),
    kind=Kind.CORRECTION,
    content="The staging database lives on port 5433, not 5432",
    realm="work",
    agent_id="claude",
    channel="cli",
    tags=("db", "staging"),
    source=Source(session="s-7", file="ops.md"),
    created_at=1_690_000_000_000,
    updated_at=1_690_000_500_000,
    event_time=1_689_000_000_000,
    confidence=Confidence(mu=0.75, sigma_sq=0.04, n=2, tau=0.005),
    strength=0.8,
    tier="hot",
    access_count=4,
    last_accessed=1_690_000_400_000,
    decayed_at=1_690_000_300_000,
    supersedes=None,
    superseded_by=None,
    truncated=False,
)


def seed_v1(conn: sqlite3.Connection) -> None:
    """What a version-1 chitta wrote: a memory (no episode_id column), its vector, the model."""
    m, c = OLD_MEMORY, OLD_MEMORY.confidence
    conn.execute(
        "INSERT INTO memories (id, kind, content, realm, agent_id, channel, tags, source, "
        "created_at, updated_at, event_time, mu, sigma_sq, n, tau, strength, tier, "
        "access_count, last_accessed, decayed_at, supersedes, superseded_by, truncated, "
        "deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (m.id, m.kind.value, m.content, m.realm, m.agent_id, m.channel, " ".join(m.tags),
         json.dumps(m.source.as_dict()), m.created_at, m.updated_at, m.event_time, c.mu,
         c.sigma_sq, c.n, c.tau, m.strength, m.tier, m.access_count, m.last_accessed,
         m.decayed_at, None, None, 0, None),
    )  # fmt: skip
    conn.execute("INSERT INTO embeddings VALUES (?, ?)", (m.id, VECTOR.tobytes()))
    conn.execute(
        "INSERT INTO meta VALUES ('model', ?)",
        (json.dumps({"name": MODEL.name, "dim": MODEL.dim, "hash": MODEL.hash}),),
    )


OLD_EPISODE = Episode(new_id(1), "old", "v2 sync", 1, 2, Source(session="s-2"), 3)
OLD_TRIPLET = Triplet(new_id(2), "old", "db", "port", "5433", 1.0, 1, None, None, 2)


def seed_v2(conn: sqlite3.Connection) -> None:
    """What a version-2 chitta added: an episode and a triplet (in realm 'old')."""
    e, t = OLD_EPISODE, OLD_TRIPLET
    conn.execute(
        "INSERT INTO episodes VALUES (?,?,?,?,?,?,?)",
        (e.id, e.realm, e.title, e.started_at, e.ended_at, json.dumps(e.source.as_dict()),
         e.created_at),
    )  # fmt: skip
    conn.execute(
        "INSERT INTO triplets VALUES (?,?,?,?,?,?,?,?,?,?)",
        (t.id, t.realm, t.subject, t.predicate, t.object, t.weight, t.valid_from,
         t.invalidated_at, t.source_memory, t.created_at),
    )  # fmt: skip


OLD_ACCESS = 1_690_000_400_000


def seed_v3(conn: sqlite3.Connection) -> None:
    """What a version-3 chitta added: an access of the old memory."""
    conn.execute("INSERT INTO access_log VALUES (?, ?)", (OLD_MEMORY.id, OLD_ACCESS))


V4_TRIPLET = Triplet(new_id(3), "old", "Ada  Lovelace", "Lives In", "London.", 0.8, 5, None,
                     None, 6)  # fmt: skip


def seed_v4(conn: sqlite3.Connection) -> None:
    """What a version-4 chitta could hold: a triplet written loosely, keyed by migration 5."""
    t = V4_TRIPLET
    conn.execute(
        "INSERT INTO triplets VALUES (?,?,?,?,?,?,?,?,?,?)",
        (t.id, t.realm, t.subject, t.predicate, t.object, t.weight, t.valid_from,
         t.invalidated_at, t.source_memory, t.created_at),
    )  # fmt: skip


V5_ALIAS = Alias("old", "Ada", "ada", "ada lovelace", 7)
V5_MEMORY = replace(OLD_MEMORY, id=new_id(1_690_000_000_002), realm="old", tags=(), source=Source(),
                    content="Staging staging staging: the old realm's own notes")  # fmt: skip


def seed_v5(conn: sqlite3.Connection) -> None:
    """What a version-5 chitta could hold: an alias, and a memory of another realm that
    shares the old memory's words (migration 6 reads the keyword index per realm)."""
    a = V5_ALIAS
    conn.execute("INSERT INTO entity_aliases VALUES (?,?,?,?,?)",
                 (a.realm, a.alias_key, a.canonical_key, a.alias, a.created_at))  # fmt: skip
    m, c = V5_MEMORY, V5_MEMORY.confidence
    conn.execute(
        "INSERT INTO memories (id, kind, content, realm, agent_id, channel, tags, source, "
        "created_at, updated_at, event_time, mu, sigma_sq, n, tau, strength, tier, decayed_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (m.id, m.kind.value, m.content, m.realm, m.agent_id, m.channel, "",
         json.dumps(m.source.as_dict()), m.created_at, m.updated_at, m.event_time, c.mu,
         c.sigma_sq, c.n, c.tau, m.strength, m.tier, m.decayed_at),
    )  # fmt: skip


def seed_v6(conn: sqlite3.Connection) -> None:
    """Version 6 added a view of the keyword index only: no rows of its own to write (the
    code tables of version 7 start empty)."""


def seed_v7(conn: sqlite3.Connection) -> None:
    """What a version-7 chitta could hold: an indexed file (migration 8 adds the record of the
    triplets made of a repository's edges beside it)."""
    conn.execute(
        "INSERT INTO code_files VALUES (?,?,?,?,?,?,?,?,?,?)",
        ("old", "/src/shop", "shop/cart.py", "python", "h1", 12, 0, "", 7, None),
    )


#: What seed_v10 writes: (id, name, qualified, path, start_line). Two symbols named "total"
#: in two cases and a third under another class, so that migration 11's index is read for an
#: exact name (its own case first), a qualified one and a prefix.
V10_SYMBOLS = (
    ("s-upper", "Total", "shop.cart.Total", "shop/cart.py", 1),
    ("s-cart", "total", "shop.cart.Cart.total", "shop/cart.py", 5),
    ("s-bill", "total", "shop.bill.Bill.total", "shop/bill.py", 3),
    ("s-totals", "totals", "shop.bill.totals", "shop/bill.py", 9),
)


def seed_v10(conn: sqlite3.Connection) -> None:
    """What a version-10 chitta could hold: symbols found through the name index of V7
    (migration 11 replaces it with one that holds what find_symbol filters and orders on)."""
    conn.executemany(
        "INSERT INTO code_symbols VALUES (?,'old','/src/shop',?,?,?,?,'method','',?,?,NULL,"
        "'python','','',7,NULL)",
        [(sid, path, name, name.lower(), q, line, line + 1)
         for sid, name, q, path, line in V10_SYMBOLS],
    )  # fmt: skip


def seed_nothing(conn: sqlite3.Connection) -> None:
    """A version whose new tables start empty: the rows before it are the test."""


#: SEEDS[v] writes rows that only a schema of version >= v can hold.
SEEDS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: seed_v1, 2: seed_v2, 3: seed_v3, 4: seed_v4, 5: seed_v5, 6: seed_v6, 7: seed_v7,
    # Versions 8, 9, 11 and 12 hold nothing the one before could not (9's links and history
    # start empty; 12's vector log starts with its one first row; 13 adds an index; 14's
    # pieces start empty).
    8: seed_nothing, 9: seed_nothing, 10: seed_v10, 11: seed_nothing, 12: seed_nothing,
    13: seed_nothing,
}  # fmt: skip


def build_at(path: Path, version: int) -> None:
    """A store file at ``version``, made by hand the way that chitta would have made it: each
    version's rows written by that version's schema, then migrated by the next step."""
    conn = sqlite3.connect(path, isolation_level=None)
    # Migration 5 keys the triplets with these (as migrate() registers them).
    conn.create_function("chitta_entity_key", 1, triplet_table.entity_key)
    conn.create_function("chitta_predicate_key", 1, triplet_table.predicate_key)
    try:
        # Version 0: a SQLite file with no tables yet, as the WAL pragma leaves it (an empty
        # file is damage, not a store: store/shape.py).
        conn.execute("PRAGMA journal_mode = WAL")
        for v in range(1, version + 1):
            conn.executescript(migrations.MIGRATIONS[v - 1])
            SEEDS[v](conn)
        if version:
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    finally:
        conn.close()


def file_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return migrations.schema_version(conn)
    finally:
        conn.close()


def schema_of(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()


def test_every_version_below_latest_has_seed_rows() -> None:
    """A new migration needs rows of the version before it in this test."""
    assert set(range(1, migrations.LATEST)) <= set(SEEDS)


@pytest.mark.parametrize("version", range(migrations.LATEST))
def test_old_file_migrates_to_latest_with_rows_intact(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.db"
    build_at(path, version)
    assert file_version(path) == version

    with Store(path) as s:
        assert s.meta("schema_version") == str(migrations.LATEST)
        assert s.integrity_check() == "ok"
        if version >= 1:
            assert s.get(OLD_MEMORY.id) == OLD_MEMORY
            assert s.model_identity() == MODEL
            np.testing.assert_array_equal(s.vectors_for([OLD_MEMORY.id])[OLD_MEMORY.id], VECTOR)
            assert [mid for mid, _ in s.keyword_search(["staging"], Scope("work"), 5)] == [
                OLD_MEMORY.id
            ]
            hits = s.vector_search(VECTOR, Scope("work"), 5)
            assert [mid for mid, _ in hits] == [OLD_MEMORY.id]
        if version >= 2:
            assert s.episodes("old") == [OLD_EPISODE]
            assert s.triplets("old")[0 if OLD_TRIPLET.id < V4_TRIPLET.id else 1] == OLD_TRIPLET
        if version >= 3:
            assert s.access_history([OLD_MEMORY.id])[OLD_MEMORY.id].times == (OLD_ACCESS,)
        if version >= 4:  # migration 5 keyed the loosely written triplet
            found = s.find_triplets(
                "old",
                subjects=["ada lovelace"],
                predicate="lives_in",
                objects=["london"],
                at=10,
                limit=5,
            )
            assert found == [V4_TRIPLET]  # fmt: skip
        if version >= 5:  # migration 6: keyword statistics per realm, over the old index
            assert s.aliases("old") == [V5_ALIAS]
            assert [m for m, _ in s.keyword_search(["staging"], Scope("old"), 5)] == [V5_MEMORY.id]
            assert s.keyword_frequencies(["staging"], "work") == (1, {"staging": 1})
            assert [m for m, _ in s.keyword_search_elsewhere(["staging"], Scope("work"), 5)] == [
                V5_MEMORY.id
            ]
        # The newer tables and columns work.
        episode = Episode(new_id(), "work", "ops sync", 1, 2, Source(session="s-8"), 3)
        s.add_episodes([episode])
        assert s.episodes("work") == [episode]
        triplet = Triplet(new_id(), "work", "staging-db", "port", "5433", 1.0, 1, None, None, 2)
        s.add_triplets([triplet])
        assert s.triplets("work") == [triplet]
        # Migration 7: the code tables; migration 8: the record of the triplets of edges.
        assert s.code().counts()["files"] == (1 if version >= 7 else 0)
        if version >= 7:
            assert s.code().files("old", "/src/shop") == {"shop/cart.py": "h1"}
        edge = ("a", "calls", "b")
        s.code().set_edge_triplets("old", "/src/shop", {edge: triplet.id}, [])
        assert s.code().edge_triplets("old", "/src/shop") == {edge: triplet.id}
        if version >= 7:  # migration 9: links, history and index runs, empty, usable
            assert s.code().index_runs("old") == []
            assert s.code().links_of("old", ["M"]) == []
        if version >= 10:  # migration 11: the symbols found through the new name index
            find = s.code().find_symbols
            assert [f.id for f in find("old", "total")] == ["s-bill", "s-cart", "s-upper"]
            assert [f.id for f in find("old", "Bill.TOTAL")] == ["s-bill"]
            assert [f.id for f in find("old", "Total", prefix=True)] == [
                "s-upper", "s-bill", "s-cart", "s-totals"]  # fmt: skip
        if version == 0:
            s.insert([(OLD_MEMORY, None)])
        # Migration 13: a period's memories found through the time index.
        when = OLD_MEMORY.event_time or OLD_MEMORY.created_at
        assert s.period_ids(Scope("work"), when, when + 1, include_superseded=True) == [
            OLD_MEMORY.id
        ]
        assert s.period_ids(Scope("work"), when + 1, when + 2, include_superseded=True) == []
        linked = replace(s.get(OLD_MEMORY.id), episode_id=episode.id)
        s.update(linked)
        assert s.get(OLD_MEMORY.id) == linked
        # v4 indexes the turns of an episode and the memories of a session.
        assert s.session_recent("s-7", 5) == [OLD_MEMORY.id]
        assert s.episode_neighbours(OLD_MEMORY.id, 2) == []
    assert file_version(path) == migrations.LATEST


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    build_at(path, 1)
    Store(path).close()
    after_first = schema_of(path)
    with Store(path) as s:
        assert s.get(OLD_MEMORY.id) == OLD_MEMORY
    assert schema_of(path) == after_first
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrations.migrate(conn) == (migrations.LATEST, migrations.LATEST)
        assert conn.total_changes == 0
    finally:
        conn.close()
    assert file_version(path) == migrations.LATEST


def test_failing_migration_leaves_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step that fails half-way is rolled back whole; the file stays usable at its version."""
    path = tmp_path / "store.db"
    build_at(path, 1)
    before = schema_of(path)
    broken = (*migrations.MIGRATIONS[:1], migrations.MIGRATIONS[1] + "\nCREATE TABLE oops (;\n")
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)

    with pytest.raises(StoreCorrupt, match="syntax error"):
        Store(path)

    assert file_version(path) == 1
    assert schema_of(path) == before  # not even the step's first tables were kept
    monkeypatch.undo()
    with Store(path) as s:  # the failed open released the lock
        assert s.meta("schema_version") == str(migrations.LATEST)
        assert s.get(OLD_MEMORY.id) == OLD_MEMORY


def indexes_of(path: Path, table: str) -> set[str]:
    return {name for kind, name, sql in schema_of(path)
            if kind == "index" and sql and f" ON {table} " in sql}  # fmt: skip


@pytest.mark.parametrize("version", [0, 7, 10])
def test_symbols_are_found_through_one_name_index(tmp_path: Path, version: int) -> None:
    """Migration 11 leaves one index on the symbols' names, the one find_symbol reads."""
    path = tmp_path / "store.db"
    build_at(path, version)
    Store(path).close()
    assert indexes_of(path, "code_symbols") == {"code_symbols_find", "code_symbols_file"}


def test_an_interrupted_migration_11_keeps_the_old_name_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is dropped and made again in one step: a failure keeps the old one, and the
    next open makes the new one."""
    path = tmp_path / "store.db"
    build_at(path, 10)
    broken = (*migrations.MIGRATIONS[:10], migrations.MIGRATIONS[10] + "\nNOT SQL AT ALL;\n")
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert file_version(path) == 10
    assert "code_symbols_name" in indexes_of(path, "code_symbols")
    monkeypatch.undo()
    with Store(path) as s:
        assert [f.id for f in s.code().find_symbols("old", "Bill.total")] == ["s-bill"]
    assert "code_symbols_name" not in indexes_of(path, "code_symbols")


def test_a_failing_step_is_rolled_back_on_the_migrating_connection(tmp_path: Path) -> None:
    """migrate() leaves no half-done step open on its connection, which stays usable (restore
    migrates the store's own writing connection)."""
    path = tmp_path / "store.db"
    build_at(path, 4)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        # A subject that migration 5's key function cannot read: a blob, written by hand.
        conn.execute("INSERT INTO triplets VALUES ('tb','old',X'00ff','p','o',1.0,1,NULL,NULL,1)")
        with pytest.raises(sqlite3.OperationalError):
            migrations.migrate(conn)
        assert not conn.in_transaction
        assert migrations.schema_version(conn) == 4
        assert "subject_key" not in {r[1] for r in conn.execute("PRAGMA table_info(triplets)")}
        conn.execute("DELETE FROM triplets WHERE id = 'tb'")
        assert migrations.migrate(conn) == (4, migrations.LATEST)
    finally:
        conn.close()


def test_steps_before_a_failing_one_stay_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step is its own transaction: a new file stops at the last step that worked."""
    path = tmp_path / "store.db"
    build_at(path, 0)
    broken = (*migrations.MIGRATIONS[:1], "CREATE TABLE half (x);\nNOT SQL AT ALL;\n")
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert file_version(path) == 1
    assert "half" not in {name for _, name, _ in schema_of(path)}


def test_meta_without_schema_version_is_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreCorrupt, match="schema_version"):
        Store(path)


def test_v2_store_gains_access_history_and_co_access(tmp_path: Path) -> None:
    """Migration 3 on a version-2 file: the old counts carry on, the new tables work."""
    path = tmp_path / "v2.db"
    build_at(path, 2)
    with Store(path) as s:
        assert s.meta("schema_version") == str(migrations.LATEST)
        other = replace(OLD_MEMORY, id=new_id(1_690_000_000_001), content="another memory")
        s.insert([(other, None)])
        ids = sorted({OLD_MEMORY.id, other.id})
        s.record_access(AccessRecord(tuple(ids), 1_700_000_000_000, tuple(ids), 0.03))
        assert s.flush_access() == 1
        history = s.access_history([OLD_MEMORY.id])[OLD_MEMORY.id]
        assert history.times == (1_700_000_000_000,)
        assert history.count == OLD_MEMORY.access_count + 1
        assert s.co_access(ids) == {(ids[0], ids[1]): pytest.approx(0.03)}
        s.add_replication(OLD_MEMORY.id, "s-9", 1)
        assert s.replication_sessions([OLD_MEMORY.id]) == {OLD_MEMORY.id: {"s-9"}}
    with Store(path) as s:
        m = s.get(OLD_MEMORY.id)
        assert (m.access_count, m.last_accessed) == (5, 1_700_000_000_000)


def test_the_current_corrections_are_read_through_their_index(tmp_path: Path) -> None:
    """A start reads the corrections without scanning every memory (a million: 4 s cold)."""
    from chitta.store.sqlite.indexes import CURRENT_CORRECTIONS

    with Store(tmp_path / "s.db") as s:
        plan = s._conn.execute("EXPLAIN QUERY PLAN " + CURRENT_CORRECTIONS).fetchall()
    assert any("memories_corrections" in str(row[-1]) for row in plan), plan
