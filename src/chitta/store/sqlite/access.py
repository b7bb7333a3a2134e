"""The access history's tables in SQL (SQLite): writing a batch of access records, and the
views recall reads, merged with the records still in the buffer (store/access.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

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


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _live(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        rows = conn.execute(f"SELECT id FROM memories WHERE id IN ({_marks(len(chunk))})", chunk)
        found.update(r[0] for r in rows)
    return found


def write_batch(conn: sqlite3.Connection, batch: Sequence[AccessRecord]) -> None:
    """Write ``batch`` inside the caller's transaction; ids purged meanwhile are skipped."""
    touched = list(dict.fromkeys(i for rec in batch for i in (*rec.ids, *rec.together)))
    live = _live(conn, touched)
    conn.executemany(
        "INSERT INTO access_log (memory_id, at) VALUES (?, ?)",
        [(i, rec.at) for rec in batch for i in rec.ids if i in live],
    )
    counts: dict[str, tuple[int, int]] = {}
    for rec in batch:
        for i in rec.ids:
            n, last = counts.get(i, (0, 0))
            counts[i] = (n + 1, max(last, rec.at))
    conn.executemany(
        "UPDATE memories SET access_count = access_count + ?, "
        "last_accessed = max(coalesce(last_accessed, 0), ?) WHERE id = ?",
        [(n, last, i) for i, (n, last) in counts.items() if i in live],
    )
    conn.executemany(
        "DELETE FROM access_log WHERE memory_id = ? AND rowid NOT IN (SELECT rowid FROM "
        "access_log WHERE memory_id = ? ORDER BY at DESC, rowid DESC LIMIT ?)",
        [(i, i, KEEP_ACCESSES) for i in touched if i in live],
    )
    conn.executemany(
        "INSERT INTO co_access (a, b, weight, updated_at) VALUES (?, ?, min(?, ?), ?) "
        "ON CONFLICT (a, b) DO UPDATE SET weight = min(?, co_access.weight + excluded.weight), "
        "updated_at = excluded.updated_at",
        [
            (a, b, MAX_CO_WEIGHT, inc, at, MAX_CO_WEIGHT)
            for (a, b), (inc, at) in pair_increments(batch).items()
            if a in live and b in live
        ],
    )


def read_history(
    conn: sqlite3.Connection, ids: Sequence[str], pending: Sequence[AccessRecord]
) -> dict[str, AccessHistory]:
    """Each id's last :data:`KEEP_ACCESSES` access times and total count, buffer included."""
    times: dict[str, list[int]] = {i: [] for i in ids}
    counts: dict[str, int] = dict.fromkeys(ids, 0)
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = _marks(len(chunk))
        for mid, at in conn.execute(
            f"SELECT memory_id, at FROM access_log WHERE memory_id IN ({marks})", chunk
        ):
            times[mid].append(at)
        for mid, n in conn.execute(
            f"SELECT id, access_count FROM memories WHERE id IN ({marks})", chunk
        ):
            counts[mid] = n
    return with_pending_history(times, counts, pending)


def read_co_access(
    conn: sqlite3.Connection, ids: Sequence[str], pending: Sequence[AccessRecord]
) -> dict[tuple[str, str], float]:
    """Co-access weights of the pairs within ``ids``, keyed (smaller, larger); buffer included."""
    wanted = set(ids)
    weights: dict[tuple[str, str], float] = {}
    chunk = sorted(wanted)
    if len(chunk) >= 2:
        for start in range(0, len(chunk), 400):
            part = chunk[start : start + 400]
            marks = _marks(len(part))
            rows = conn.execute(
                f"SELECT a, b, weight FROM co_access WHERE a IN ({marks})", part
            ).fetchall()
            weights.update(((a, b), w) for a, b, w in rows if b in wanted)
    return with_pending_pairs(weights, wanted, pending)


def read_partners(
    conn: sqlite3.Connection, ids: Sequence[str], pending: Sequence[AccessRecord], limit: int
) -> dict[str, list[tuple[str, float, int]]]:
    """Each id's heaviest co-access partners: (other, weight, updated at); buffer included."""
    found: dict[str, dict[str, tuple[float, int]]] = {i: {} for i in ids}
    chunk = sorted(found)
    for start in range(0, len(chunk), 400):
        part = chunk[start : start + 400]
        marks = _marks(len(part))
        for a, b, w, t in conn.execute(
            f"SELECT a, b, weight, updated_at FROM co_access WHERE a IN ({marks}) UNION ALL "
            f"SELECT a, b, weight, updated_at FROM co_access WHERE b IN ({marks})",
            part + part,
        ):
            if a in found:
                found[a][b] = (w, t)
            if b in found:
                found[b][a] = (w, t)
    return with_pending_partners(found, pending, limit)
