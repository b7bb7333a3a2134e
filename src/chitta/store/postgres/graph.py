"""Triplets and entity aliases on PostgreSQL: store/triplets.py's reads and writes with
``%s`` parameters and PostgreSQL's planner (no ``INDEXED BY``: the indexes have the same
shapes, and each bounded read is one (node, side) at a time, so an index in weight order
serves it).

Keys, currency and bounds are store/triplets.py's (``entity_key``, ``predicate_key``,
``SCAN_FACTOR``, ``Bounded``): both backends answer alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import psycopg

from chitta.store.postgres.rows import TRIPLET_COLUMNS, triplet_from_row
from chitta.store.records import Triplet
from chitta.store.triplets import (
    HUB_WINDOW,
    PREDICATES_SEEN,
    SCAN_FACTOR,
    Bounded,
    entity_key,
    predicate_key,
)

Read = Callable[[str, Sequence[object]], list]
_KEYED = f"{TRIPLET_COLUMNS}, subject_key, predicate_key, object_key"
_CURRENT = "valid_from <= %s AND (invalidated_at IS NULL OR invalidated_at > %s)"


def _is_current(row: Sequence, at: int) -> bool:
    return row[6] <= at and (row[7] is None or row[7] > at)


def _keys(rows: Iterable[Sequence]) -> tuple[tuple[str, str, str], ...]:
    return tuple((r[10], r[11], r[12]) for r in rows)


def _heaviest_current(
    read: Read, sql: str, params: Sequence[object], at: int, cap: int
) -> tuple[list, bool]:
    """The first ``cap`` rows of ``sql`` (heaviest first) current at ``at``, looking at no
    more than ``SCAN_FACTOR × cap`` rows; and whether that cut (store/triplets.py says why)."""
    scan = SCAN_FACTOR * cap
    rows = read(f"{sql} ORDER BY weight DESC LIMIT %s", (*params, scan + 1))
    live = [r for r in rows[:scan] if _is_current(r, at)]
    return live[:cap], len(live) > cap or len(rows) > scan


def insert(cur: psycopg.Cursor, triplets: Iterable[Triplet]) -> None:
    cur.executemany(
        f"INSERT INTO triplets ({_KEYED}) VALUES ({', '.join(['%s'] * 13)})",
        [(t.id, t.realm, t.subject, t.predicate, t.object, t.weight, t.valid_from,
          t.invalidated_at, t.source_memory, t.created_at, entity_key(t.subject),
          predicate_key(t.predicate), entity_key(t.object)) for t in triplets],
    )  # fmt: skip


def all_of(read: Read, realm: str | None) -> list[Triplet]:
    where, params = ("WHERE realm = %s", [realm]) if realm is not None else ("", [])
    return [triplet_from_row(r) for r in read(
        f"SELECT {TRIPLET_COLUMNS} FROM triplets {where} ORDER BY id", params)]  # fmt: skip


def by_id(read: Read, triplet_id: str) -> Triplet | None:
    rows = read(f"SELECT {TRIPLET_COLUMNS} FROM triplets WHERE id = %s", (triplet_id,))
    return triplet_from_row(rows[0]) if rows else None


def same_current(
    read: Read, realm: str, subjects: Sequence[str], predicate: str, objects: Sequence[str],
    at: int,
) -> Triplet | None:  # fmt: skip
    rows = read(
        f"SELECT {TRIPLET_COLUMNS} FROM triplets WHERE realm = %s AND subject_key = ANY(%s) "
        f"AND object_key = ANY(%s) AND predicate_key = %s AND {_CURRENT} ORDER BY id LIMIT 1",
        (realm, list(subjects), list(objects), predicate, at, at),
    )
    return triplet_from_row(rows[0]) if rows else None


def between(
    read: Read, realm: str, subjects: Sequence[str], objects: Sequence[str], at: int, cap: int
) -> Bounded:
    rows = read(
        f"SELECT {TRIPLET_COLUMNS} FROM triplets WHERE realm = %s AND subject_key = ANY(%s) "
        f"AND object_key = ANY(%s) AND {_CURRENT} ORDER BY weight DESC, id LIMIT %s",
        (realm, list(subjects), list(objects), at, at, cap + 1),
    )
    return Bounded(tuple(triplet_from_row(r) for r in rows[:cap]), len(rows) > cap)


def outgoing(
    read: Read, realm: str, subjects: Sequence[str], predicates: Sequence[str], at: int, cap: int
) -> Bounded:
    found: list = []
    cut = False
    for subject in subjects:
        for predicate in predicates:
            rows, capped = _heaviest_current(
                read,
                f"SELECT {_KEYED} FROM triplets WHERE realm = %s AND subject_key = %s AND "
                "predicate_key = %s",
                (realm, subject, predicate), at, cap,
            )  # fmt: skip
            found.extend(rows)
            cut = cut or capped
    return Bounded(tuple(triplet_from_row(r) for r in found), cut, _keys(found))


def out_predicates(
    read: Read, realm: str, subjects: Sequence[str], at: int, most: int = 50
) -> tuple[list[str], bool]:
    found: set[str] = set()
    cut = False
    for subject in subjects:
        after = ""
        for seen in range(PREDICATES_SEEN + 1):
            # A skip scan of triplets_out: one seek per distinct predicate.
            rows = read(
                "SELECT predicate_key FROM triplets WHERE realm = %s AND subject_key = %s AND "
                "predicate_key > %s ORDER BY predicate_key LIMIT 1",
                (realm, subject, after),
            )
            if not rows:
                break
            if seen == PREDICATES_SEEN or len(found) >= most:
                cut = True
                break
            after = rows[0][0]
            if read(
                "SELECT 1 FROM triplets WHERE realm = %s AND subject_key = %s AND "
                f"predicate_key = %s AND {_CURRENT} LIMIT 1",
                (realm, subject, after, at, at),
            ):
                found.add(after)
    return sorted(found)[:most], cut


def known(read: Read, realm: str, keys: Sequence[str]) -> bool:
    rows = read(
        "SELECT 1 FROM triplets WHERE realm = %s AND subject_key = ANY(%s) UNION ALL "
        "SELECT 1 FROM triplets WHERE realm = %s AND object_key = ANY(%s) LIMIT 1",
        (realm, list(keys), realm, list(keys)),
    )
    return bool(rows)


def touching(read: Read, realm: str, keys: Sequence[str], at: int, cap: int) -> Bounded:
    found: dict[str, Sequence] = {}
    cut = False
    for key in keys:
        for column in ("subject_key", "object_key"):
            rows, capped = _heaviest_current(
                read, f"SELECT {_KEYED} FROM triplets WHERE realm = %s AND {column} = %s",
                (realm, key), at, cap,
            )  # fmt: skip
            for r in rows:
                found.setdefault(r[0], r)
            cut = cut or capped
    ordered = [found[i] for i in sorted(found)]
    return Bounded(tuple(triplet_from_row(r) for r in ordered), cut, _keys(ordered))


def find(
    read: Read,
    realm: str,
    *,
    subjects: Sequence[str] = (),
    predicate: str | None = None,
    objects: Sequence[str] = (),
    at: int | None,
    limit: int,
) -> list[Triplet]:
    where, params = ["realm = %s"], [realm]
    if subjects:
        where.append("subject_key = ANY(%s)")
        params.append(list(subjects))
    if predicate is not None:
        where.append("predicate_key = %s")
        params.append(predicate)
    if objects:
        where.append("object_key = ANY(%s)")
        params.append(list(objects))
    if at is not None:
        where.append(_CURRENT)
        params.extend((at, at))
    rows = read(
        f"SELECT {TRIPLET_COLUMNS} FROM triplets WHERE {' AND '.join(where)} "
        "ORDER BY valid_from DESC, id LIMIT %s",
        (*params, limit),
    )
    return [triplet_from_row(r) for r in rows]


def hubs(read: Read, realm: str, at: int, limit: int, window: int = HUB_WINDOW) -> dict[str, int]:
    rows = read(
        "WITH recent AS (SELECT subject_key, object_key, source_memory FROM triplets "
        f"WHERE realm = %s AND source_memory IS NOT NULL AND {_CURRENT} ORDER BY seq DESC "
        "LIMIT %s) SELECT key, count(DISTINCT source_memory) AS n FROM ("
        "SELECT subject_key AS key, source_memory FROM recent UNION ALL "
        "SELECT object_key, source_memory FROM recent) k GROUP BY key ORDER BY n DESC, key "
        "LIMIT %s",
        (realm, at, at, window, limit),
    )
    return {r[0]: r[1] for r in rows}


def sourced_by(
    read: Read, memory_ids: Sequence[str], at: int, cap: int
) -> tuple[dict[str, list[tuple[str, str, float]]], bool]:
    out: dict[str, list[tuple[str, str, float]]] = {}
    cut = False
    ids = list(dict.fromkeys(memory_ids))
    stated = {
        r[0]
        for r in read(
            "SELECT DISTINCT source_memory FROM triplets WHERE source_memory = ANY(%s)", (ids,)
        )
    }
    for memory_id in (i for i in ids if i in stated):
        rows, capped = _heaviest_current(
            read,
            "SELECT subject_key, object_key, weight, 0, 0, 0, valid_from, invalidated_at "
            "FROM triplets WHERE source_memory = %s",
            (memory_id,), at, cap,
        )  # fmt: skip
        if rows:
            out[memory_id] = [(r[0], r[1], r[2]) for r in rows]
        cut = cut or capped
    return out, cut


# --- aliases ------------------------------------------------------------------------------


def canonical(read: Read, realm: str, key: str) -> str:
    rows = read(
        "SELECT canonical_key FROM entity_aliases WHERE realm = %s AND alias_key = %s",
        (realm, key),
    )
    return rows[0][0] if rows else key


def canonical_many(read: Read, realm: str, keys: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(keys))
    out = {k: k for k in wanted}
    rows = read(
        "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = %s AND "
        "alias_key = ANY(%s)",
        (realm, wanted),
    )
    out.update({r[0]: r[1] for r in rows})
    return out


def alias_groups(read: Read, realm: str, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each of ``keys`` that has aliases or is one, every key of its entity (canonical
    first); keys with neither are left out."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    roots: dict[str, str] = {}
    asked = set(wanted)
    for alias, root in read(
        "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = %s AND "
        "(alias_key = ANY(%s) OR canonical_key = ANY(%s))",
        (realm, wanted, wanted),
    ):
        roots.setdefault(root, root)
        if alias in asked:
            roots[alias] = root
    members: dict[str, list[str]] = {}
    for alias, root in read(
        "SELECT alias_key, canonical_key FROM entity_aliases WHERE realm = %s AND "
        "canonical_key = ANY(%s) ORDER BY alias_key",
        (realm, sorted(set(roots.values()))),
    ):
        members.setdefault(root, [root]).append(alias)
    return {k: tuple(members.get(roots[k], [roots[k]])) for k in wanted if k in roots}


def names_of(read: Read, realm: str, key: str) -> tuple[str, ...]:
    root = canonical(read, realm, key)
    rows = read(
        "SELECT alias_key FROM entity_aliases WHERE realm = %s AND canonical_key = %s "
        "ORDER BY alias_key",
        (realm, root),
    )
    return (root, *(r[0] for r in rows))


def add_alias(
    cur: psycopg.Cursor, realm: str, alias: str, alias_key: str, canonical_key: str, at: int
) -> None:
    """Make ``alias_key`` mean ``canonical_key``; aliases of ``alias_key`` follow it."""
    cur.execute(
        "UPDATE entity_aliases SET canonical_key = %s WHERE realm = %s AND canonical_key = %s",
        (canonical_key, realm, alias_key),
    )
    cur.execute(
        "INSERT INTO entity_aliases (realm, alias_key, canonical_key, alias, created_at) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (realm, alias_key) DO UPDATE SET "
        "canonical_key = excluded.canonical_key, alias = excluded.alias",
        (realm, alias_key, canonical_key, alias, at),
    )


def remove_alias(cur: psycopg.Cursor, realm: str, alias_key: str) -> str | None:
    row = cur.execute(
        "DELETE FROM entity_aliases WHERE realm = %s AND alias_key = %s RETURNING canonical_key",
        (realm, alias_key),
    ).fetchone()
    return row[0] if row else None


def aliases(read: Read, realm: str | None) -> list[tuple]:
    where, params = ("WHERE realm = %s", (realm,)) if realm is not None else ("", ())
    return read(
        f"SELECT realm, alias, alias_key, canonical_key, created_at FROM entity_aliases {where} "
        "ORDER BY realm, alias_key",
        params,
    )
