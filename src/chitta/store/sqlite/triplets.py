"""The triplet table in SQL (SQLite): reads that follow edges and aliases, and the writes.

The keys, bounds and row record every backend shares are store/triplets.py. Reads that follow
one node's edges read ``cap`` rows per node and predicate, heaviest first, from an index in
that order, so a hub with 100,000 edges costs what ``cap`` costs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from chitta.store.records import Triplet
from chitta.store.triplets import (
    COLUMNS,
    HUB_WINDOW,
    PREDICATES_SEEN,
    SCAN_FACTOR,
    Bounded,
    entity_key,
    from_row,
    is_current,
    predicate_key,
)

Query = Callable[[str, Sequence[object]], list[sqlite3.Row]]


def current(at: int) -> tuple[str, tuple[int, int]]:
    """The SQL condition (and its parameters) for an edge current at ``at``."""
    return "valid_from <= ? AND (invalidated_at IS NULL OR invalidated_at > ?)", (at, at)


def _heaviest_current(
    query: Query, sql: str, params: Sequence[object], at: int, cap: int
) -> tuple[list[sqlite3.Row], bool]:
    """The first ``cap`` rows of ``sql`` (read heaviest first from an index) current at
    ``at``, looking at no more than ``SCAN_FACTOR × cap`` rows; and whether that cut.

    Validity is checked here, not in SQL: no index orders by it, so a condition in the query
    would make SQLite walk past every edge that no longer holds — a node whose heaviest
    100,000 edges were invalidated cost 70-100 ms. Here it costs the window, and says so."""
    scan = SCAN_FACTOR * cap
    rows = query(f"{sql} ORDER BY weight DESC LIMIT ?", (*params, scan + 1))
    live = [r for r in rows[:scan] if is_current(r, at)]
    return live[:cap], len(live) > cap or len(rows) > scan


def insert(conn: sqlite3.Connection, triplets: Iterable[Triplet]) -> None:
    """Write ``triplets`` with the keys of their names."""
    conn.executemany(
        f"INSERT INTO triplets ({COLUMNS}, subject_key, predicate_key, object_key) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(t.id, t.realm, t.subject, t.predicate, t.object, t.weight, t.valid_from,
          t.invalidated_at, t.source_memory, t.created_at, entity_key(t.subject),
          predicate_key(t.predicate), entity_key(t.object)) for t in triplets],
    )  # fmt: skip


def by_id(query: Query, triplet_id: str) -> Triplet | None:
    """The triplet with this id, or None."""
    rows = query(f"SELECT {COLUMNS} FROM triplets WHERE id = ?", (triplet_id,))
    return from_row(rows[0]) if rows else None


def same_current(
    query: Query,
    realm: str,
    subjects: Sequence[str],
    predicate: str,
    objects: Sequence[str],
    at: int,
) -> Triplet | None:
    """A current edge of ``realm`` over ``predicate`` from any of ``subjects`` to any of
    ``objects`` (keys: an entity's every name), if one exists."""
    cond, params = current(at)
    rows = query(
        f"SELECT {COLUMNS} FROM triplets WHERE realm = ? AND subject_key IN ({_marks(subjects)})"
        f" AND object_key IN ({_marks(objects)}) AND predicate_key = ? AND {cond} "
        "ORDER BY id LIMIT 1",
        (realm, *subjects, *objects, predicate, *params),
    )
    return from_row(rows[0]) if rows else None


def invalidate(conn: sqlite3.Connection, triplet_id: str, at: int) -> None:
    """Set the edge's ``invalidated_at``; the row stays, for history."""
    conn.execute("UPDATE triplets SET invalidated_at = ? WHERE id = ?", (at, triplet_id))


def between(
    query: Query, realm: str, subjects: Sequence[str], objects: Sequence[str], at: int, cap: int
) -> Bounded:
    """Current edges from any of ``subjects`` to any of ``objects`` (keys), heaviest first."""
    cond, params = current(at)
    # The pair index: left to itself SQLite reads an object's every incoming edge from
    # triplets_in, for its weight order; the pair's rows are few, and sorting them is cheap.
    rows = query(
        f"SELECT {COLUMNS} FROM triplets INDEXED BY triplets_pair WHERE realm = ? AND "
        f"subject_key IN ({_marks(subjects)}) AND object_key IN ({_marks(objects)}) AND {cond} "
        "ORDER BY weight DESC, id LIMIT ?",
        (realm, *subjects, *objects, *params, cap + 1),
    )
    return Bounded(tuple(from_row(r) for r in rows[:cap]), len(rows) > cap)


def outgoing(
    query: Query, realm: str, subjects: Sequence[str], predicates: Sequence[str], at: int, cap: int
) -> Bounded:
    """Current edges from ``subjects`` over ``predicates`` (keys): at most ``cap`` per subject
    and predicate, heaviest first; ``cut`` when a node had more."""
    found: list[sqlite3.Row] = []
    cut = False
    for subject in subjects:
        for predicate in predicates:
            # One (subject, predicate) at a time: the index hands rows over in weight order,
            # so the LIMIT stops the read however many edges the node has.
            rows, capped = _heaviest_current(
                query,
                f"SELECT {COLUMNS}, subject_key, predicate_key, object_key FROM triplets "
                "INDEXED BY triplets_out WHERE realm = ? AND subject_key = ? AND "
                "predicate_key = ?",
                (realm, subject, predicate), at, cap,
            )  # fmt: skip
            found.extend(rows)
            cut = cut or capped
    keys = tuple((r["subject_key"], r["predicate_key"], r["object_key"]) for r in found)
    return Bounded(tuple(from_row(r) for r in found), cut, keys)


def out_predicates(
    query: Query, realm: str, subjects: Sequence[str], at: int, most: int = 50
) -> tuple[list[str], bool]:
    """The predicates (keys) of the current edges leaving ``subjects``, at most ``most``, among
    the first ``PREDICATES_SEEN`` predicates of each subject's edges; and whether a bound cut
    the list."""
    cond, params = current(at)
    found: set[str] = set()
    cut = False
    for subject in subjects:
        after = ""
        for seen in range(PREDICATES_SEEN + 1):
            # A skip scan of the index: one seek per distinct predicate, whatever the number
            # of edges under it, then one probe for a current edge among them.
            rows = query(
                "SELECT predicate_key FROM triplets INDEXED BY triplets_out WHERE realm = ? AND "
                "subject_key = ? AND predicate_key > ? ORDER BY predicate_key LIMIT 1",
                (realm, subject, after),
            )
            if not rows:
                break
            if seen == PREDICATES_SEEN or len(found) >= most:
                # A node's history can hold thousands of predicates that no longer hold: stop
                # at the bound, saying that more predicates were left unread.
                cut = True
                break
            after = rows[0][0]
            if query(
                "SELECT 1 FROM triplets INDEXED BY triplets_out WHERE realm = ? AND "
                f"subject_key = ? AND predicate_key = ? AND {cond} LIMIT 1",
                (realm, subject, after, *params),
            ):
                found.add(after)
    return sorted(found)[:most], cut


def known(query: Query, realm: str, keys: Sequence[str]) -> bool:
    """Whether any edge of ``realm``, current or not, has one of ``keys`` at either end."""
    marks = _marks(keys)
    rows = query(
        f"SELECT 1 FROM triplets WHERE realm = ? AND subject_key IN ({marks}) UNION ALL "
        f"SELECT 1 FROM triplets WHERE realm = ? AND object_key IN ({marks}) LIMIT 1",
        (realm, *keys, realm, *keys),
    )
    return bool(rows)


def touching(query: Query, realm: str, keys: Sequence[str], at: int, cap: int) -> Bounded:
    """Current edges with one of ``keys`` at either end: at most ``cap`` per key and side,
    heaviest first."""
    found: dict[str, sqlite3.Row] = {}
    cut = False
    for key in keys:
        for column, index in (("subject_key", "triplets_from"), ("object_key", "triplets_in")):
            rows, capped = _heaviest_current(
                query,
                f"SELECT {COLUMNS}, subject_key, predicate_key, object_key FROM triplets "
                f"INDEXED BY {index} WHERE realm = ? AND {column} = ?",
                (realm, key), at, cap,
            )  # fmt: skip
            for r in rows:
                found.setdefault(r["id"], r)
            cut = cut or capped
    ordered = [found[i] for i in sorted(found)]
    keys_of = tuple((r["subject_key"], r["predicate_key"], r["object_key"]) for r in ordered)
    return Bounded(tuple(from_row(r) for r in ordered), cut, keys_of)


def find(
    query: Query,
    realm: str,
    *,
    subjects: Sequence[str] = (),
    predicate: str | None = None,
    objects: Sequence[str] = (),
    at: int | None,
    limit: int,
) -> list[Triplet]:
    """Edges matching the given keys, newest first: current at ``at``, or all if ``at`` is
    None."""
    where, params = ["realm = ?"], [realm]
    if subjects:
        where.append(f"subject_key IN ({_marks(subjects)})")
        params.extend(subjects)
    if predicate is not None:
        where.append("predicate_key = ?")
        params.append(predicate)
    if objects:
        where.append(f"object_key IN ({_marks(objects)})")
        params.extend(objects)
    if at is not None:
        cond, extra = current(at)
        where.append(cond)
        params.extend(extra)
    rows = query(
        f"SELECT {COLUMNS} FROM triplets WHERE {' AND '.join(where)} "
        "ORDER BY valid_from DESC, id LIMIT ?",
        (*params, limit),
    )
    return [from_row(r) for r in rows]


def hubs(query: Query, realm: str, at: int, limit: int, window: int = HUB_WINDOW) -> dict[str, int]:
    """The ``limit`` entity keys with the most distinct source memories over the realm's
    ``window`` newest current edges that have a source."""
    cond, params = current(at)
    # The newest sourced edges of the realm, read backwards through an index of exactly those
    # (its entries end in the rowid) and stopped at ``window``: counting every edge of a realm
    # grows with its size (a hub's 100,000 edges took half a second).
    rows = query(
        "WITH recent AS (SELECT subject_key, object_key, source_memory FROM triplets "
        "INDEXED BY triplets_sourced "
        f"WHERE realm = ? AND source_memory IS NOT NULL AND {cond} ORDER BY rowid DESC LIMIT ?) "
        "SELECT key, count(DISTINCT source_memory) AS n FROM ("
        "SELECT subject_key AS key, source_memory FROM recent UNION ALL "
        "SELECT object_key, source_memory FROM recent) GROUP BY key ORDER BY n DESC, key LIMIT ?",
        (realm, *params, window, limit),
    )
    return {r[0]: r[1] for r in rows}


def sourced_by(
    query: Query, memory_ids: Sequence[str], at: int, cap: int
) -> tuple[dict[str, list[tuple[str, str, float]]], bool]:
    """Per memory, the current edges it is the source of: (subject key, object key, weight),
    at most ``cap`` each, heaviest first; and whether a memory had more."""
    out: dict[str, list[tuple[str, str, float]]] = {}
    cut = False
    for memory_id in _sources(query, memory_ids):
        # One memory at a time: the index hands its edges over in weight order, so the LIMIT
        # stops the read however many edges one memory stated.
        rows, capped = _heaviest_current(
            query,
            "SELECT subject_key, object_key, weight, valid_from, invalidated_at FROM triplets "
            "INDEXED BY triplets_source WHERE source_memory = ?",
            (memory_id,), at, cap,
        )  # fmt: skip
        if rows:
            out[memory_id] = [(r[0], r[1], r[2]) for r in rows]
        cut = cut or capped
    return out, cut


def _sources(query: Query, memory_ids: Sequence[str]) -> list[str]:
    """Which of ``memory_ids`` stated any edge, in their order: one query per 500 ids (a
    spread's frontier holds thousands of memories, most of which stated nothing)."""
    found: list[str] = []
    ids = list(dict.fromkeys(memory_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = query(
            f"WITH asked (id) AS (VALUES {', '.join('(?)' for _ in chunk)}) SELECT id FROM asked "
            "WHERE EXISTS (SELECT 1 FROM triplets WHERE source_memory = asked.id)",
            chunk,
        )
        found.extend(r[0] for r in rows)
    return found


# --- aliases ------------------------------------------------------------------------------


def canonical(query: Query, realm: str, key: str) -> str:
    """The entity key that ``key`` is an alias of, or ``key`` itself."""
    rows = query(
        "SELECT canonical_key FROM entity_aliases WHERE realm = ? AND alias_key = ?", (realm, key)
    )
    return rows[0][0] if rows else key


def canonical_many(query: Query, realm: str, keys: Iterable[str]) -> dict[str, str]:
    """The canonical key of each of ``keys`` (itself when it is no alias)."""
    wanted = sorted(set(keys))
    out = {k: k for k in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = query(
            "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = ? AND "
            f"alias_key IN ({_marks(chunk)})",
            (realm, *chunk),
        )
        out.update({r[0]: r[1] for r in rows})
    return out


def alias_groups(query: Query, realm: str, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each of ``keys`` that has aliases or is one, every key of its entity (canonical
    first); keys with neither are left out. Two queries, however many keys."""
    wanted = sorted(set(keys))
    roots: dict[str, str] = {}
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        marks = _marks(chunk)
        rows = query(
            "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = ? AND "
            f"(alias_key IN ({marks}) OR canonical_key IN ({marks}))",
            (realm, *chunk, *chunk),
        )
        for alias, root in rows:
            roots.setdefault(root, root)
            if alias in chunk:
                roots[alias] = root
    members: dict[str, list[str]] = {}
    canonicals = sorted(set(roots.values()))
    for start in range(0, len(canonicals), 500):
        chunk = canonicals[start : start + 500]
        rows = query(
            "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = ? AND "
            f"canonical_key IN ({_marks(chunk)}) ORDER BY alias_key",
            (realm, *chunk),
        )
        for alias, root in rows:
            members.setdefault(root, [root]).append(alias)
    return {k: tuple(members.get(roots[k], [roots[k]])) for k in wanted if k in roots}


def names_of(query: Query, realm: str, key: str) -> tuple[str, ...]:
    """Every key that means the entity ``key`` (canonical first, then its aliases)."""
    root = canonical(query, realm, key)
    rows = query(
        "SELECT alias_key FROM entity_aliases WHERE realm = ? AND canonical_key = ? "
        "ORDER BY alias_key",
        (realm, root),
    )
    return (root, *(r[0] for r in rows))


def add_alias(
    conn: sqlite3.Connection, realm: str, alias: str, alias_key: str, canonical_key: str, at: int
) -> None:
    """Make ``alias_key`` mean ``canonical_key``; aliases of ``alias_key`` follow it, so no
    chain is ever longer than one step."""
    conn.execute(
        "UPDATE entity_aliases SET canonical_key = ? WHERE realm = ? AND canonical_key = ?",
        (canonical_key, realm, alias_key),
    )
    conn.execute(
        "INSERT INTO entity_aliases (realm, alias_key, canonical_key, alias, created_at) "
        "VALUES (?,?,?,?,?) ON CONFLICT (realm, alias_key) DO UPDATE SET "
        "canonical_key = excluded.canonical_key, alias = excluded.alias",
        (realm, alias_key, canonical_key, alias, at),
    )


def remove_alias(conn: sqlite3.Connection, realm: str, alias_key: str) -> str | None:
    """Forget an alias; the canonical key it meant, or None when there was no such alias."""
    row = conn.execute(
        "SELECT canonical_key FROM entity_aliases WHERE realm = ? AND alias_key = ?",
        (realm, alias_key),
    ).fetchone()
    if row is None:
        return None
    conn.execute("DELETE FROM entity_aliases WHERE realm = ? AND alias_key = ?", (realm, alias_key))
    return row[0]


def aliases(query: Query, realm: str | None) -> list[tuple[str, str, str, str, int]]:
    """(realm, alias as written, alias key, canonical key, created_at) rows, by realm and key."""
    where, params = ("WHERE realm = ?", (realm,)) if realm is not None else ("", ())
    rows = query(
        f"SELECT realm, alias, alias_key, canonical_key, created_at FROM entity_aliases {where} "
        "ORDER BY realm, alias_key",
        params,
    )
    return [tuple(r) for r in rows]  # type: ignore[misc]


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values)) or "NULL"
