"""Access control per agent (store/postgres/access_control.py): agents alice and bob are
database roles; row-level security keeps each out of the other's private realm, in
hand-written SQL and through the store, while both share realm ``team`` (read and write) and
realm ``handbook`` (read only). The owner, who ran the migrations, sees everything."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
import pytest
from psycopg import errors as pg_errors

from chitta.code.model import FileExtract, Symbol
from chitta.embed.base import ModelIdentity
from chitta.embed.pieces import pack
from chitta.errors import AccessDenied, MemoryNotFound
from chitta.store.access import AccessRecord
from chitta.store.code_links import SymbolLink
from chitta.store.postgres import PostgresStore
from chitta.store.postgres.access_control import (
    AGENT_ROLE,
    LATER_MEMORY_TABLES,
    MEMORY_TABLES,
    REALM_TABLES,
)
from chitta.store.postgres.code_links_schema import CODE_LINK_TABLES
from chitta.store.postgres.code_schema import CODE_TABLES, EDGE_TABLES, SEARCH_TABLES
from chitta.store.records import Episode, Scope, Source, Triplet

MODEL = ModelIdentity("test-model", 4, "0" * 64)
ALICE, BOB = "alice-notes", "bob-notes"
TEAM, HANDBOOK = "team", "handbook"


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def as_role(url: str, role: str) -> str:
    """``url`` with ``role`` as its user (the test server trusts local logins)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{role}@{host}"))


def triplet(realm: str, n: int, source: str | None = None) -> Triplet:
    return Triplet(id=f"T{realm}{n}", realm=realm, subject="Ada", predicate="deploys",
                   object=f"service{n}", weight=1.0, valid_from=0, invalidated_at=None,
                   source_memory=source, created_at=n)  # fmt: skip


@dataclass
class Team:
    """The database, its owner's store, and the memories each realm was given."""

    url: str
    owner: PostgresStore
    home: Path
    ids: dict[str, list[str]]

    def store(self, role: str) -> PostgresStore:
        return PostgresStore(as_role(self.url, role), home=self.home / role)

    def sql(self, role: str) -> psycopg.Connection:
        return psycopg.connect(as_role(self.url, role), autocommit=True)


@pytest.fixture
def team(pg_server: Any, pg_url: str, tmp_path: Path, make_memory) -> Iterator[Team]:
    """Roles alice and bob (members of chitta_agent), each with a private realm; realm team
    shared read-write and handbook read-only. Bob writes his realm through his own store:
    memories with vectors, a triplet, an alias, an episode, accesses, a co-access, a
    replication and a purge, so every table holds some of his rows."""
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        for role in ("alice", "bob"):
            conn.execute(
                f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') "
                f"THEN CREATE ROLE {role} LOGIN; END IF; END $$"
            )
    owner = PostgresStore(pg_url, home=tmp_path / "owner")
    owner.bind_model(MODEL)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"GRANT {AGENT_ROLE} TO alice, bob")
        conn.execute("SELECT chitta_grant('alice', %s, true)", (ALICE,))
        conn.execute("SELECT chitta_grant('bob', %s, true)", (BOB,))
        conn.execute("SELECT chitta_share(%s)", (TEAM,))
        conn.execute("SELECT chitta_share(%s, false)", (HANDBOOK,))
    handbook = make_memory("deploy checklist: tag the release", realm=HANDBOOK)
    owner.insert([(handbook, unit(1, 1, 0, 0))])
    ids: dict[str, list[str]] = {HANDBOOK: [handbook.id]}
    team = Team(pg_url, owner, tmp_path, ids)
    with team.store("bob") as bob:
        session = Source(session="bob-session", role="user")
        mine = [make_memory(f"deploy secret {n} of bob", realm=BOB, source=session,
                            tags=("ops",)) for n in range(3)]  # fmt: skip
        bob.insert([(m, unit(1, 0, n, 0)) for n, m in enumerate(mine)])
        bob.add_episodes([Episode(id="Ebob", realm=BOB, title="bob's week", started_at=0,
                                  ended_at=None, source=Source(), created_at=1)])  # fmt: skip
        bob.add_triplets([triplet(BOB, 1, mine[0].id)])
        bob.add_alias(BOB, "Ada L.", "ada l.", "ada")
        bob.add_replication(mine[0].id, "other-session", 5)
        bob.set_pieces({mine[0].id: pack(np.stack([unit(1, 0, 0, 0), unit(0, 1, 0, 0)]))})
        pair = (mine[0].id, mine[1].id)
        bob.record_access(AccessRecord(at=10, ids=pair, together=pair, step=0.5))
        bob.flush_access()
        bob.purge(mine[2].id)
        ids[BOB] = [m.id for m in mine[:2]]
    assert owner.access_history(ids[BOB])[ids[BOB][0]].count == 1
    try:
        yield team
    finally:
        owner.close()


def _bobs_rows(conn: psycopg.Connection, ids: list[str]) -> dict[str, int]:
    """How many rows of bob's realm each table shows ``conn``."""
    counts = {}
    for table in REALM_TABLES:
        counts[table] = conn.execute(f"SELECT count(*) FROM {table} WHERE realm = %s",
                                     (BOB,)).fetchone()[0]  # fmt: skip
    for table, (columns, _) in (MEMORY_TABLES | LATER_MEMORY_TABLES).items():
        named = " OR ".join(f"{c} = ANY(%s)" for c in columns)
        counts[table] = conn.execute(f"SELECT count(*) FROM {table} WHERE {named}",
                                     [ids] * len(columns)).fetchone()[0]  # fmt: skip
    return counts


def test_hand_written_sql_finds_none_of_bobs_rows(team: Team) -> None:
    with team.sql("postgres") as owner, team.sql("alice") as alice, team.sql("bob") as bob:
        everything = _bobs_rows(owner, team.ids[BOB])
        assert all(everything.values()), everything  # every table holds some of bob's rows
        assert _bobs_rows(bob, team.ids[BOB]) == everything
        assert set(_bobs_rows(alice, team.ids[BOB]).values()) == {0}
        # Nothing of bob's in what alice reads whole, either.
        realms = alice.execute(
            "SELECT realm FROM memories UNION SELECT realm FROM embeddings UNION SELECT realm "
            "FROM kw_postings UNION SELECT realm FROM kw_realms UNION SELECT realm FROM triplets "
            "UNION SELECT realm FROM episodes UNION SELECT realm FROM entity_aliases"
        ).fetchall()
        assert {r[0] for r in realms} == {HANDBOOK}
        with pytest.raises(pg_errors.InsufficientPrivilege):
            alice.execute("SELECT * FROM chitta_grants")
        # The grant functions answer for her own role, never for one she cannot act as.
        assert alice.execute("SELECT chitta_readable_realms('bob')").fetchall() == []
        mine = alice.execute("SELECT chitta_readable_realms(current_user) ORDER BY 1").fetchall()
        assert [r[0] for r in mine] == sorted([ALICE, HANDBOOK, TEAM])
        assert alice.execute("SELECT chitta_can_read(%s), chitta_can_write(%s), "
                             "chitta_can_write(%s)", (TEAM, HANDBOOK, ALICE)).fetchone() == (
            True, False, True)  # fmt: skip


def test_hand_written_writes_into_bobs_realm_fail(team: Team) -> None:
    bob_id = team.ids[BOB][0]
    with team.sql("alice") as alice:
        refused = [
            (
                "INSERT INTO memories (id, kind, content, realm, created_at, updated_at, mu, "
                "sigma_sq, tau, strength, tier) VALUES ('X1', 'insight', 'planted', %s, 0, 0, 0, "
                "1, 1, 1, 'hot')",
                (BOB,),
            ),
            (
                "INSERT INTO triplets (id, realm, subject, predicate, object, valid_from, "
                "created_at, subject_key, predicate_key, object_key) VALUES ('TX', %s, 'a', 'b', "
                "'c', 0, 0, 'a', 'b', 'c')",
                (BOB,),
            ),
            (
                "INSERT INTO episodes (id, realm, title, started_at, created_at) VALUES "
                "('EX', %s, 't', 0, 0)",
                (BOB,),
            ),
            ("INSERT INTO entity_aliases VALUES (%s, 'x', 'y', 'x', 0)", (BOB,)),
            ("INSERT INTO kw_realms VALUES (%s, 1, 1)", (BOB,)),
            ("INSERT INTO purged (gen, memory_id, realm) VALUES (0, 'X', %s)", (BOB,)),
            ("INSERT INTO access_log (memory_id, at) VALUES (%s, 0)", (bob_id,)),
            ("INSERT INTO replications VALUES (%s, 's', 0)", (bob_id,)),
            (
                "INSERT INTO meta VALUES ('schema_version', '99') ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value",
                (),
            ),
            ("UPDATE meta SET value = '{}' WHERE key = 'model'", ()),
            ("SELECT * FROM chitta_grant('alice', %s, true)", (BOB,)),
            ("INSERT INTO chitta_grants VALUES (%s, 'alice', true, 0)", (BOB,)),
            # A realm shared read-only: readable, so the update reaches it and is refused.
            ("UPDATE memories SET content = 'vandalised' WHERE realm = %s", (HANDBOOK,)),
            (
                "INSERT INTO memories (id, kind, content, realm, created_at, updated_at, mu, "
                "sigma_sq, tau, strength, tier) VALUES ('X2', 'insight', 'x', %s, 0, 0, 0, 1, 1, "
                "1, 'hot')",
                (HANDBOOK,),
            ),
        ]
        for sql, params in refused:
            with pytest.raises(pg_errors.InsufficientPrivilege):
                alice.execute(sql, params)
        # Rows she cannot see, she cannot change or delete: nothing happens.
        assert alice.execute("UPDATE memories SET content = 'x' WHERE realm = %s",
                             (BOB,)).rowcount == 0  # fmt: skip
        for table in ("memories", "embeddings", "kw_postings", "triplets", "episodes"):
            assert alice.execute(f"DELETE FROM {table} WHERE realm = ANY(%s)",
                                 ([BOB, HANDBOOK],)).rowcount == 0  # fmt: skip
        assert alice.execute("DELETE FROM access_log").rowcount == 0
        assert alice.execute("DELETE FROM meta WHERE key = 'schema_version'").rowcount == 0
    with team.sql("postgres") as owner:
        assert (
            owner.execute(
                "SELECT count(*) FROM memories WHERE realm = ANY(%s) AND content "
                "NOT IN ('x', 'vandalised')",
                ([BOB, HANDBOOK],),
            ).fetchone()[0]
            == 3
        )
    assert team.owner.integrity_check() == "ok"


def test_through_the_store_alice_sees_none_of_bobs(team: Team, make_memory) -> None:
    bobs = set(team.ids[BOB])
    with team.store("alice") as alice:
        own = make_memory("deploy notes of alice", realm=ALICE)
        alice.insert([(own, unit(1, 0, 0, 1))])
        for scope in (Scope(BOB), Scope(BOB, agent_id="")):
            assert alice.keyword_search(["deploy"], scope, 10) == []
            assert alice.keyword_search(["ops"], scope, 10, column="tags") == []
            assert alice.vector_search(unit(1, 0, 0, 0), scope, 10) == []
            assert alice.vector_search(unit(1, 0, 0, 0), scope, 10, exact=True) == []
            assert alice.sparse_search(unit(1, 0, 0, 0), scope, 10) == []
            assert alice.scope_oldest(scope) is None
            assert alice.period_ids(scope, 0, 2**62, include_superseded=True) == []
        elsewhere = alice.keyword_search_elsewhere(["deploy"], Scope(ALICE), 10)
        assert [i for i, _ in elsewhere] == team.ids[HANDBOOK]
        near = alice.vector_search_elsewhere(unit(1, 0, 0, 0), Scope(ALICE), 10)
        assert [i for i, _ in near] == team.ids[HANDBOOK]
        assert alice.vector_search_among(unit(1, 0, 0, 0), sorted(bobs), 10) == []
        assert alice.keyword_frequencies(["deploy"], BOB) == (0, {"deploy": 0})
        assert alice.term_matches(["deploy"], sorted(bobs)) == {}
        for memory_id in bobs:
            assert not alice.exists(memory_id)
            with pytest.raises(MemoryNotFound):
                alice.get(memory_id, include_deleted=True)
        assert alice.get_many(sorted(bobs)) == {}
        assert alice.vectors_for(sorted(bobs)) == {}
        assert alice.pieces_for(sorted(bobs)) == {}
        assert alice.set_pieces({i: pack(np.stack([unit(1, 0, 0, 0)])) for i in bobs}) == 0
        assert alice.existing_ids("memories", sorted(bobs)) == set()
        assert alice.session_recent("bob-session", 10) == []
        assert {m.realm for m in alice.iter_memories(include_deleted=True)} == {ALICE, HANDBOOK}
        assert alice.triplets() == [] and alice.triplets(BOB) == []
        assert alice.triplet(f"T{BOB}1") is None
        assert alice.find_triplets(BOB, subjects=["ada"], at=None, limit=10) == []
        assert not alice.entity_known(BOB, ["ada"])
        assert alice.aliases() == [] and alice.canonical(BOB, "ada l.") == "ada l."
        assert alice.episodes() == []
        history = alice.access_history(sorted(bobs))
        assert {h.count for h in history.values()} == {0}
        assert alice.co_access(sorted(bobs)) == {}
        assert alice.co_neighbours(team.ids[BOB][0]) == []
        assert alice.replication_sessions(sorted(bobs)) == {}
        counts = alice.counts()
        assert counts["per_realm"] == {ALICE: 1, HANDBOOK: 1}
        assert counts["triplets"] == 0 and counts["episodes"] == 0
        assert alice.vector_count() == 2
        assert alice.term_stats().size(BOB) == 0 and alice.term_stats().size(ALICE) == 1
        assert alice.links().entity_counts(BOB) == {}
        assert alice.integrity_check() == "ok"


def test_writing_into_bobs_realm_through_the_store_is_access_denied(
    team: Team, make_memory
) -> None:
    with team.owner._snapshot() as read:
        before = read("SELECT count(*), max(gen) FROM memories")[0]
    handbook = team.owner.get(team.ids[HANDBOOK][0])
    with team.store("alice") as alice:
        for realm in (BOB, HANDBOOK):
            with pytest.raises(AccessDenied) as raised:
                alice.insert([(make_memory("planted", realm=realm), unit(0, 1, 0, 0))])
            assert raised.value.code == "access_denied"
            with pytest.raises(AccessDenied):
                alice.add_triplets([triplet(realm, 9)])
            with pytest.raises(AccessDenied):
                alice.add_alias(realm, "x", "x", "y")
            with pytest.raises(AccessDenied):
                alice.add_episodes([Episode(id=f"E{realm}", realm=realm, title="t",
                                            started_at=0, ended_at=None, source=Source(),
                                            created_at=0)])  # fmt: skip
        # The shared read-only realm: she reads it, and may not change it.
        assert alice.get(handbook.id) == handbook
        with pytest.raises(AccessDenied):
            alice.update(replace(handbook, content="vandalised"))
        with pytest.raises(AccessDenied):
            alice.set_deleted(handbook.id, 1)
        with pytest.raises(AccessDenied, match="handbook"):
            alice.purge(handbook.id)
        with pytest.raises(AccessDenied):
            alice.add_replication(handbook.id, "s", 1)
        # Bob's private memory does not exist for her.
        with pytest.raises(MemoryNotFound):
            alice.purge(team.ids[BOB][0])
        with pytest.raises(MemoryNotFound):
            alice.update(replace(handbook, id=team.ids[BOB][0], realm=BOB))
        # Her recalls of the read-only realm leave its history alone, and fail nothing.
        alice.record_access(AccessRecord(at=20, ids=(handbook.id,)))
        assert alice.flush_access() == 1
        with pytest.raises(AccessDenied):
            alice.set_meta("model", "{}")
        with pytest.raises(AccessDenied):
            alice.replace_model(ModelIdentity("other", 4, "1" * 64), {})
    with team.owner._snapshot() as read:
        assert read("SELECT count(*), max(gen) FROM memories")[0] == before
    assert team.owner.get(handbook.id) == handbook
    assert team.owner.access_history([handbook.id])[handbook.id].count == 0
    assert team.owner.integrity_check() == "ok"


def test_both_see_the_shared_realm_and_each_others_writes_at_once(team: Team, make_memory) -> None:
    with team.store("alice") as alice, team.store("bob") as bob:
        assert alice.term_stats().size(TEAM) == 0  # built before bob writes
        from_bob = make_memory("the release train leaves at noon", realm=TEAM)
        bob.insert([(from_bob, unit(0, 0, 1, 0))])
        assert [i for i, _ in alice.keyword_search(["release"], Scope(TEAM), 5)] == [from_bob.id]
        assert alice.vector_search(unit(0, 0, 1, 0), Scope(TEAM), 5)[0][0] == from_bob.id
        assert alice.term_stats().size(TEAM) == 1
        from_alice = replace(make_memory("the release train is late", realm=TEAM),
                             supersedes=from_bob.id)  # fmt: skip
        alice.insert([(from_alice, unit(0, 0, 1, 1))])
        assert bob.get(from_bob.id).superseded_by == from_alice.id
        found = bob.keyword_search(["release"], Scope(TEAM), 5)
        assert {i for i, _ in found} == {from_bob.id, from_alice.id}
        alice.add_triplets([triplet(TEAM, 1, from_alice.id)])
        assert [t.id for t in bob.triplets(TEAM)] == [f"T{TEAM}1"]
        pair = (from_alice.id, from_bob.id)
        bob.record_access(AccessRecord(at=30, ids=pair, together=pair, step=0.5))
        bob.flush_access()
        assert alice.access_history([from_alice.id])[from_alice.id].count == 1
        assert alice.co_neighbours(from_alice.id) == bob.co_neighbours(from_alice.id) != []
        alice.purge(from_bob.id)
        assert not bob.exists(from_bob.id)
        assert bob.term_stats().size(TEAM) == 1
        # Each still sees only their own private realm beside the shared ones.
        assert {m.realm for m in bob.iter_memories()} == {BOB, TEAM, HANDBOOK}
        assert {m.realm for m in alice.iter_memories()} == {TEAM, HANDBOOK}


def test_the_owner_sees_and_writes_everything(team: Team, make_memory) -> None:
    counts = team.owner.counts()
    assert counts["per_realm"] == {BOB: 2, HANDBOOK: 1}
    assert counts["triplets"] == 1 and counts["episodes"] == 1
    assert team.owner.keyword_search(["deploy"], Scope(BOB), 5) != []
    ungranted = make_memory("the owner's own note", realm="nobody-has-it")
    team.owner.insert([(ungranted, unit(0, 1, 1, 0))])
    team.owner.update(replace(team.owner.get(team.ids[BOB][0]), tier="warm"))
    team.owner.purge(team.ids[BOB][1])
    team.owner.record_access(AccessRecord(at=40, ids=(ungranted.id,)))
    team.owner.flush_access()
    assert team.owner.access_history([ungranted.id])[ungranted.id].count == 1
    assert team.owner.integrity_check() == "ok"
    with PostgresStore(team.url, home=team.home / "again") as again:  # migrations: done already
        assert again.meta("schema_version") == team.owner.meta("schema_version")
    with team.store("alice") as alice:
        assert not alice.exists(ungranted.id)


def test_revoking_takes_effect_at_once(team: Team, make_memory) -> None:
    with team.store("alice") as alice:
        note = make_memory("alice's deploy diary", realm=ALICE)
        alice.insert([(note, unit(0, 1, 0, 0))])
        assert alice.term_stats().size(ALICE) == 1
        with team.sql("postgres") as owner:
            assert owner.execute("SELECT chitta_revoke('alice', %s)", (ALICE,)).fetchone()[0]
            assert not owner.execute("SELECT chitta_revoke('alice', %s)", (ALICE,)).fetchone()[0]
        assert alice.keyword_search(["diary"], Scope(ALICE), 5) == []
        assert alice.term_stats().size(ALICE) == 0  # the epoch moved: built again
        with pytest.raises(AccessDenied):
            alice.insert([(make_memory("more", realm=ALICE), None)])
        with team.sql("postgres") as owner:
            owner.execute("SELECT chitta_grant('alice', %s)", (ALICE,))  # read only
        assert [i for i, _ in alice.keyword_search(["diary"], Scope(ALICE), 5)] == [note.id]
        with pytest.raises(AccessDenied):
            alice.insert([(make_memory("more", realm=ALICE), None)])


def test_an_agent_cannot_make_the_schema(pg_server: Any, team: Team) -> None:
    """An empty database (schema version 0) is the owner's to make: an agent's store says so."""
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE chitta_empty_for_alice")
    try:
        with pytest.raises(AccessDenied):
            PostgresStore(as_role(pg_server.get_uri("chitta_empty_for_alice"), "alice"),
                          home=team.home / "x")  # fmt: skip
    finally:
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
            conn.execute("DROP DATABASE chitta_empty_for_alice WITH (FORCE)")


def test_every_data_table_has_row_level_security(team: Team) -> None:
    with team.sql("postgres") as conn:
        tables = conn.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid), "
            "has_table_privilege('alice', c.oid, 'SELECT') FROM pg_class c "
            "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'"
        ).fetchall()
    by_name = {name: rest for name, *rest in tables}
    assert by_name.pop("chitta_grants") == [False, False, 0, False]
    assert by_name.pop("generation")[3] is True  # one counter, no realm's data
    assert set(by_name) == {*REALM_TABLES, *MEMORY_TABLES, *LATER_MEMORY_TABLES, *CODE_TABLES,
                            *EDGE_TABLES, *SEARCH_TABLES, *CODE_LINK_TABLES, "meta"}  # fmt: skip
    for name, (secured, forced, policies, readable) in by_name.items():
        assert secured and not forced and policies >= 2 and readable, name


def test_code_tables_are_kept_by_realm_too(team: Team) -> None:
    """An agent reads and writes the code of its own and shared realms, never another's."""
    sym = Symbol("deploy", "ops.deploy", "function", "def deploy()", "ops.py", 1, 2, "ops",
                 "python")  # fmt: skip
    extract = FileExtract("ops.py", "python", "h", 2, (sym,))
    with team.store("bob") as bob:
        bob.code().replace_file(BOB, "/repo", extract, None, 1)
        bob.code().replace_file(TEAM, "/repo", extract, None, 1)
    with team.store("alice") as alice:
        assert alice.code().find_symbols(BOB, "deploy") == []
        assert alice.code().files(BOB, "/repo") == {}
        assert [s.realm for s in alice.code().find_symbols(TEAM, "deploy")] == [TEAM]
        with pytest.raises(AccessDenied):
            alice.code().replace_file(HANDBOOK, "/repo", extract, None, 2)
        alice.code().replace_file(ALICE, "/repo", extract, None, 2)
        assert alice.code().counts() == {"files": 2, "symbols": 2, "callsites": 0,
                                         "imports": 0, "bases": 0}  # fmt: skip
        # The links, the history and the index runs are kept by realm the same way.
        (sid,) = alice.code().replace_file(ALICE, "/repo", extract, "c1", 3)
        run = alice.code().record_index(ALICE, "/repo", "c1", 4)
        assert alice.code().add_links([SymbolLink(ALICE, "M", sid, "/repo", "ops.deploy", "",
                                                  "c1", 5)]) == 1  # fmt: skip
        assert alice.code().history_as_of(ALICE, run) == {sid: ("ops.py", "ops.deploy", "")}
        assert alice.code().index_runs(BOB) == [] and alice.code().links_of(BOB, ["M"]) == []
        # An agent may not vacuum the owner's tables: the server skips them with a warning,
        # and the agent's index goes on.
        alice.code().refresh_statistics()
        assert [s.realm for s in alice.code().find_symbols(ALICE, "deploy")] == [ALICE]
        with pytest.raises(AccessDenied):
            alice.code().record_index(HANDBOOK, "/repo", "c1", 6)
    with team.store("bob") as bob:
        assert bob.code().index_runs(ALICE) == [] and bob.code().links_of(ALICE, ["M"]) == []
    assert team.owner.code().counts()["symbols"] == 3
    assert len(team.owner.code().links_of(ALICE, ["M"])) == 1
