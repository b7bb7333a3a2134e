"""The access history's SQL on PostgreSQL: writing a batch of store/access.py's records, and
the reads that merge the tables with the records still buffered (as store/access.py does for
SQLite)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import psycopg

from chitta.store.access import (
    KEEP_ACCESSES,
    MAX_CO_WEIGHT,
    AccessHistory,
    AccessRecord,
    pair_increments,
    with_pending_history,
    with_pending_pairs,
    with_pending_partners,
)

Read = Callable[[str, Sequence[object]], list]


def write_batch(cur: psycopg.Cursor, batch: Sequence[AccessRecord]) -> None:
    """Write ``batch`` inside the caller's transaction; ids purged meanwhile are skipped, and
    so are memories in realms this role may read but not write (postgres/access_control.py:
    an agent's recalls of a realm shared read-only leave its history alone). Rows are
    touched in id order, so two processes flushing at once never deadlock."""
    touched = sorted({i for rec in batch for i in (*rec.ids, *rec.together)})
    live = {
        r[0]
        for r in cur.execute(
            "SELECT id FROM memories WHERE id = ANY(%s) AND chitta_can_write(realm) "
            "ORDER BY id FOR UPDATE",
            (touched,),
        )
    }
    cur.executemany(
        "INSERT INTO access_log (memory_id, at) VALUES (%s, %s)",
        [(i, rec.at) for rec in batch for i in rec.ids if i in live],
    )
    counts: dict[str, tuple[int, int]] = {}
    for rec in batch:
        for i in rec.ids:
            n, last = counts.get(i, (0, 0))
            counts[i] = (n + 1, max(last, rec.at))
    cur.executemany(
        "UPDATE memories SET access_count = access_count + %s, "
        "last_accessed = greatest(coalesce(last_accessed, 0), %s) WHERE id = %s",
        [(n, last, i) for i, (n, last) in sorted(counts.items()) if i in live],
    )
    cur.execute(
        "DELETE FROM access_log l USING (SELECT id, row_number() OVER (PARTITION BY memory_id "
        "ORDER BY at DESC, id DESC) AS place FROM access_log WHERE memory_id = ANY(%s)) k "
        "WHERE l.id = k.id AND k.place > %s",
        ([i for i in touched if i in live], KEEP_ACCESSES),
    )
    cur.executemany(
        "INSERT INTO co_access (a, b, weight, updated_at) VALUES (%s, %s, least(%s, %s), %s) "
        "ON CONFLICT (a, b) DO UPDATE SET weight = least(%s, co_access.weight + "
        "excluded.weight), updated_at = excluded.updated_at",
        [
            (a, b, MAX_CO_WEIGHT, inc, at, MAX_CO_WEIGHT)
            for (a, b), (inc, at) in sorted(pair_increments(batch).items())
            if a in live and b in live
        ],
    )


def read_history(
    read: Read, ids: Sequence[str], pending: Sequence[AccessRecord]
) -> dict[str, AccessHistory]:
    """Each id's last :data:`KEEP_ACCESSES` access times and total count, buffer included."""
    times: dict[str, list[int]] = {i: [] for i in ids}
    counts: dict[str, int] = dict.fromkeys(ids, 0)
    wanted = list(times)
    for mid, at in read("SELECT memory_id, at FROM access_log WHERE memory_id = ANY(%s)",
                        (wanted,)):  # fmt: skip
        times[mid].append(at)
    for mid, n in read("SELECT id, access_count FROM memories WHERE id = ANY(%s)", (wanted,)):
        counts[mid] = n
    return with_pending_history(times, counts, pending)


def read_co_access(
    read: Read, ids: Sequence[str], pending: Sequence[AccessRecord]
) -> dict[tuple[str, str], float]:
    """Co-access weights of the pairs within ``ids``, keyed (smaller, larger); buffer included."""
    wanted = sorted(set(ids))
    weights: dict[tuple[str, str], float] = {}
    if len(wanted) >= 2:
        rows = read(
            "SELECT a, b, weight FROM co_access WHERE a = ANY(%s) AND b = ANY(%s)",
            (wanted, wanted),
        )
        weights.update(((a, b), w) for a, b, w in rows)
    return with_pending_pairs(weights, set(wanted), pending)


def read_partners(
    read: Read, ids: Sequence[str], pending: Sequence[AccessRecord], limit: int
) -> dict[str, list[tuple[str, float, int]]]:
    """Each id's heaviest co-access partners: (other, weight, updated at); buffer included."""
    found: dict[str, dict[str, tuple[float, int]]] = {i: {} for i in ids}
    wanted = sorted(found)
    if wanted:
        for a, b, w, t in read(
            "SELECT a, b, weight, updated_at FROM co_access WHERE a = ANY(%s) UNION ALL "
            "SELECT a, b, weight, updated_at FROM co_access WHERE b = ANY(%s)",
            (wanted, wanted),
        ):
            if a in found:
                found[a][b] = (w, t)
            if b in found:
                found[b][a] = (w, t)
    return with_pending_partners(found, pending, limit)
