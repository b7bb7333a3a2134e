"""The triplet table's SQL: keyed matching, time, bounded reads from the indexes of migration 5,
and aliases."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator

import pytest

from chitta.store.records import Triplet
from chitta.store.sqlite import Store
from chitta.store.sqlite import triplets as table

NOW = 1_000_000
_ids = itertools.count()


def edge(s: str, p: str, o: str, w: float = 1.0, *, start: int = 0, end: int | None = None,
         source: str | None = None, realm: str = "work") -> Triplet:  # fmt: skip
    return Triplet(f"T{next(_ids):08d}", realm, s, p, o, w, start, end, source, start)


@pytest.fixture
def reads(store: Store) -> table.Query:
    return store._query


@pytest.fixture
def sources(store: Store, make_memory) -> list[str]:
    """Three memories of realm 'work' that edges can name as their source."""
    memories = [make_memory(f"note {i}") for i in range(3)]
    store.insert([(m, None) for m in memories])
    return [m.id for m in memories]


@pytest.fixture
def raw(store: Store) -> Iterator[sqlite3.Connection]:
    """A second connection to the store's file, to read query plans and count the work."""
    conn = sqlite3.connect(store.path)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


def _plan(conn: sqlite3.Connection, sql: str, params: tuple) -> str:
    return " | ".join(r["detail"] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


def _steps(conn: sqlite3.Connection, read) -> int:
    """Virtual machine steps (in thousands) SQLite spends on ``read(query)``."""
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    conn.set_progress_handler(tick, 1000)
    try:
        read(lambda sql, params: conn.execute(sql, params).fetchall())
    finally:
        conn.set_progress_handler(None, 0)
    return count[0]


def test_writes_store_the_keys_of_names_as_written(store: Store, raw) -> None:
    store.add_triplets([edge("New  York City.", "Lives In", "U.S.A", realm="work")])
    row = raw.execute(
        "SELECT subject, subject_key, predicate_key, object_key FROM triplets"
    ).fetchone()
    assert tuple(row) == ("New  York City.", "new york city", "lives_in", "u.s.a")


def test_between_reads_current_edges_in_one_direction_heaviest_first(store, reads) -> None:
    store.add_triplets([
        edge("Ada", "works_at", "Acme", 0.4), edge("ada", "founded", "acme", 0.9),
        edge("Ada", "sued", "Acme", 1.0, end=NOW - 1),  # invalidated
        edge("Ada", "buys", "Acme", 1.0, start=NOW + 1),  # not yet valid
        edge("Acme", "employs", "Ada"),  # the other way
        edge("Ada", "works_at", "Acme", realm="home"),
    ])  # fmt: skip
    got = table.between(reads, "work", ["ada"], ["acme"], NOW, 10)
    assert [t.predicate for t in got.rows] == ["founded", "works_at"] and not got.cut
    cut = table.between(reads, "work", ["ada"], ["acme"], NOW, 1)
    assert [t.predicate for t in cut.rows] == ["founded"] and cut.cut
    assert [t.predicate for t in table.between(reads, "work", ["ada"], ["acme"], NOW - 2, 9).rows
            ] == ["sued", "founded", "works_at"]  # fmt: skip


def test_between_reads_the_pair_index_even_when_b_is_a_hub(store, reads, raw) -> None:
    """a→b where b has thousands of incoming edges (USA, the object of every located_in) reads
    the pair's rows, not all of b's."""
    store.add_triplets([edge(f"p{i:04d}", "located_in", "USA", 0.5) for i in range(5000)])
    got = table.between(reads, "work", ["p0001"], ["usa"], NOW, 10)
    assert [t.subject for t in got.rows] == ["p0001"] and not got.cut
    assert [t.subject for t in table.between(reads, "work", ["usa"], ["p0001"], NOW, 10).rows
            ] == []  # fmt: skip
    pair = _steps(raw, lambda q: table.between(q, "work", ["p0001"], ["usa"], NOW, 10))
    whole = _steps(raw, lambda q: table.touching(q, "work", ["usa"], NOW, 5000))
    assert pair * 20 < whole


def test_outgoing_reads_each_node_and_predicate_from_its_index_and_stops(store, reads, raw) -> None:
    store.add_triplets([edge("hub", "contains", f"p{i:04d}", (i + 1) / 5000) for i in range(5000)])
    store.add_triplets([edge("hub", "imports", "x"), edge("hub", "contains", "gone", 1.0, end=1)])
    got = table.outgoing(reads, "work", ["hub"], ["contains", "imports"], NOW, 3)
    assert [t.object for t in got.rows] == ["p4999", "p4998", "p4997", "x"] and got.cut
    assert not table.outgoing(reads, "work", ["hub"], ["imports"], NOW, 3).cut

    seen: list[int] = []

    def recording(sql: str, params) -> list:
        rows = reads(sql, params)
        seen.append(len(rows))
        return rows

    table.outgoing(recording, "work", ["hub"], ["contains"], NOW, 10)
    assert seen == [table.SCAN_FACTOR * 10 + 1]  # the window, and one to tell it cut
    sql = ("SELECT id FROM triplets INDEXED BY triplets_out WHERE realm = ? AND subject_key = ? "
           "AND predicate_key = ? ORDER BY weight DESC LIMIT ?")  # fmt: skip
    plan = _plan(raw, sql, ("work", "hub", "contains", 41))
    assert "triplets_out" in plan and "TEMP B-TREE" not in plan  # index order: no sort
    # The work grows with the bound, not with the node's 5,000 edges.
    small = _steps(raw, lambda q: table.outgoing(q, "work", ["hub"], ["contains"], NOW, 10))
    whole = _steps(raw, lambda q: table.outgoing(q, "work", ["hub"], ["contains"], NOW, 5000))
    assert small * 20 < whole
    # Naming c's predicates seeks once per predicate, whatever the number of edges.
    named = _steps(raw, lambda q: table.out_predicates(q, "work", ["hub"], NOW))
    assert named * 20 < whole


def test_touching_reads_both_sides_bounded_per_key(store, reads, raw) -> None:
    store.add_triplets([edge("hub", "links", f"o{i:03d}", (i + 1) / 500) for i in range(500)])
    store.add_triplets([edge(f"s{i:03d}", "links", "hub", (i + 1) / 500) for i in range(500)])
    store.add_triplets([edge("solo", "links", "hub", 0.2), edge("hub", "old", "x", 1.0, end=5)])
    got = table.touching(reads, "work", ["hub"], NOW, 4)
    ends = sorted(t.object if t.subject == "hub" else t.subject for t in got.rows)
    assert ends == ["o496", "o497", "o498", "o499", "s496", "s497", "s498", "s499"] and got.cut
    few = table.touching(reads, "work", ["solo"], NOW, 4)
    assert [t.object for t in few.rows] == ["hub"] and not few.cut
    both = table.touching(reads, "work", ["solo", "hub"], NOW, 600)
    assert len(both.rows) == 1001  # the solo edge once, though two keys reach it
    small = _steps(raw, lambda q: table.touching(q, "work", ["hub"], NOW, 5))
    whole = _steps(raw, lambda q: table.touching(q, "work", ["hub"], NOW, 1000))
    assert small * 20 < whole


def test_known_counts_any_edge_at_either_end_of_the_realm(store, reads) -> None:
    store.add_triplets([edge("Ada", "lived_in", "Rome", end=1), edge("Bo", "x", "y", realm="home")])
    assert table.known(reads, "work", ["ada"]) and table.known(reads, "work", ["rome"])
    assert table.known(reads, "work", ["zed", "rome"])
    assert not table.known(reads, "work", ["bo"]) and not table.known(reads, "work", ["lived_in"])
    assert not table.known(reads, "work", [])


def test_find_filters_by_keys_and_time_newest_first(store, reads) -> None:
    a = edge("Ada", "lives_in", "Paris", start=10, end=20)
    b = edge("Ada", "lives_in", "Berlin", start=20)
    c = edge("Bo", "lives_in", "Berlin", start=5)
    d = edge("Ada", "works_at", "Acme", start=30)
    store.add_triplets([a, b, c, d])
    assert table.find(reads, "work", subjects=["ada"], at=None, limit=9) == [d, b, a]
    assert table.find(reads, "work", subjects=["ada"], at=15, limit=9) == [a]
    assert table.find(reads, "work", objects=["berlin"], at=NOW, limit=9) == [b, c]
    assert table.find(reads, "work", predicate="works_at", at=NOW, limit=9) == [d]
    assert table.find(reads, "work", subjects=["ada", "bo"], objects=["berlin"], at=NOW,
                      limit=1) == [b]  # fmt: skip
    assert table.find(reads, "home", at=None, limit=9) == []


def test_hubs_count_distinct_sources_of_current_edges(store, reads, sources) -> None:
    m0, m1, m2 = sources
    store.add_triplets([
        edge("Hub", "x", "a", source=m0), edge("Hub", "x", "b", source=m0),
        edge("c", "x", "hub", source=m1), edge("Hub", "x", "d", source=m2, end=5),
        edge("Hub", "x", "e"), edge("Hub", "x", "f", source=m2, realm="home"),
    ])  # fmt: skip
    assert table.hubs(reads, "work", NOW, 2) == {"hub": 2, "a": 1}
    assert table.hubs(reads, "work", 3, 9)["hub"] == 3  # before the third was invalidated
    # Only the newest ``window`` edges with a source are counted.
    assert table.hubs(reads, "work", NOW, 9, window=1) == {"c": 1, "hub": 1}


def test_sourced_by_is_bounded_per_memory_heaviest_first(store, reads, raw, sources) -> None:
    m0, m1, m2 = sources
    store.add_triplets([edge("Hub", "x", f"p{i:04d}", (i + 1) / 3000, source=m0)
                        for i in range(3000)])  # fmt: skip
    store.add_triplets([edge("a", "x", "b", 0.3, source=m1), edge("a", "x", "c", source=m1, end=1)])
    got, cut = table.sourced_by(reads, [m0, m1, m2, "nobody"], NOW, 2)
    assert got == {m0: [("hub", "p2999", 1.0), ("hub", "p2998", 2999 / 3000)],
                   m1: [("a", "b", 0.3)]} and cut  # fmt: skip
    many = [f"x{i}" for i in range(1200)] + [m1]
    assert table.sourced_by(reads, many, NOW, 5) == ({m1: [("a", "b", 0.3)]}, False)
    small = _steps(raw, lambda q: table.sourced_by(q, [m0], NOW, 5))
    whole = _steps(raw, lambda q: table.sourced_by(q, [m0], NOW, 3000))
    assert small * 20 < whole


def test_out_predicates_names_current_ones_only(store, reads) -> None:
    store.add_triplets([edge("c", "imports", f"m{i}") for i in range(50)])
    store.add_triplets([edge("c", "calls", "f", end=1), edge("C.", "contains", "g"),
                        edge("c", "zeta", "h", start=NOW + 1)])  # fmt: skip
    assert table.out_predicates(reads, "work", ["c"], NOW) == (["contains", "imports"], False)
    assert table.out_predicates(reads, "work", ["c"], NOW, most=1) == (["contains"], True)
    assert table.out_predicates(reads, "work", ["c"], 0) == (["calls", "contains", "imports"],
                                                            False)  # fmt: skip
    assert table.out_predicates(reads, "work", ["nobody"], NOW) == ([], False)


def test_same_current_matches_any_name_of_each_end(store, reads) -> None:
    kept = edge("New York City", "located_in", "USA")
    store.add_triplets([kept, edge("NYC", "located_in", "Canada", end=5)])
    assert table.same_current(reads, "work", ["nyc", "new york city"], "located_in", ["usa"],
                              NOW) == kept  # fmt: skip
    assert table.same_current(reads, "work", ["nyc"], "located_in", ["canada"], NOW) is None
    assert table.same_current(reads, "work", ["nyc"], "located_in", ["canada"], 4) is not None


def test_aliases_resolve_in_one_step_and_are_per_realm(store, reads) -> None:
    store.add_alias("work", "NYC", "nyc", "new york city")
    store.add_alias("work", "Big Apple", "big apple", "new york city")
    assert table.canonical(reads, "work", "big apple") == "new york city"
    assert table.names_of(reads, "work", "nyc") == ("new york city", "big apple", "nyc")
    # The canonical name made an alias in turn: its aliases follow it, so none is two steps away.
    store.add_alias("work", "New York City", "new york city", "new york")
    assert table.canonical(reads, "work", "nyc") == "new york"
    assert table.names_of(reads, "work", "big apple") == (
        "new york", "big apple", "new york city", "nyc"
    )  # fmt: skip
    assert table.canonical(reads, "home", "nyc") == "nyc"
    assert table.names_of(reads, "home", "nyc") == ("nyc",)
    rows = table.aliases(reads, "work")
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("Big Apple", "big apple", "new york"),
        ("New York City", "new york city", "new york"),
        ("NYC", "nyc", "new york"),
    ]
    assert table.aliases(reads, None) == rows
    assert store.remove_alias("work", "nyc") is True
    assert store.remove_alias("work", "nyc") is False
    assert table.names_of(reads, "work", "nyc") == ("nyc",)


def test_out_predicates_stops_after_a_bounded_number_of_predicates(store, reads) -> None:
    """A node with thousands of predicates none of which holds now (its history) costs a
    bounded number of reads, not one or two per predicate."""
    store.add_triplets([edge("c", f"was_{i:05d}", "x", end=1) for i in range(3000)])
    store.add_triplets([edge("c", "zz_now", "y")])
    calls = [0]

    def counting(sql: str, params) -> list:
        calls[0] += 1
        return reads(sql, params)

    # zz_now lies beyond the bound: not named, and the cut is said.
    assert table.out_predicates(counting, "work", ["c"], NOW) == ([], True)
    assert calls[0] == 2 * table.PREDICATES_SEEN + 1
    assert table.out_predicates(reads, "work", ["c"], 0) == (
        [f"was_{i:05d}" for i in range(50)], True
    )  # fmt: skip


def test_edges_that_no_longer_hold_cost_the_window_not_their_number(store, reads) -> None:
    """A node whose heaviest edges were all invalidated: the read looks at SCAN_FACTOR × cap
    of them, no more, and says it was cut rather than claim the node has no current edge."""
    store.add_triplets([edge("hub", "contains", f"old{i:04d}", 0.5 + i / 10000, end=NOW - 1)
                        for i in range(2000)])  # fmt: skip
    store.add_triplets([edge("hub", "contains", "light", 0.1)])
    seen: list[int] = []

    def recording(sql: str, params) -> list:
        rows = reads(sql, params)
        seen.append(len(rows))
        return rows

    got = table.outgoing(recording, "work", ["hub"], ["contains"], NOW, 10)
    assert got.rows == () and got.cut and seen == [table.SCAN_FACTOR * 10 + 1]
    # With room enough, the current edge under the invalidated ones is found.
    wide = table.outgoing(reads, "work", ["hub"], ["contains"], NOW, 600)
    assert [t.object for t in wide.rows] == ["light"] and not wide.cut
    # In the past, before they were invalidated, the old edges are the answer.
    past = table.outgoing(reads, "work", ["hub"], ["contains"], NOW - 2, 10)
    assert len(past.rows) == 10 and past.cut
