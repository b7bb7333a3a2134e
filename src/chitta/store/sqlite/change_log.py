"""The store's change log: which memories changed, in order, so a sidecar saved at one point
can be brought up to date by reading back only what changed after it (issue 24, instant
start).

Triggers (migrations.py V12) add a row naming the memory for every memory stored, every
change of its text, tags, realm, agent, channel or liveness, every purge, and every vector
stored, replaced or removed — whoever writes the file, this chitta or another process. Each
row has a sequence number and a random token: a sidecar records the row it was saved at (a
:class:`Stamp`), and is the store's only while the log still holds that row with that token.
A backup put back, or another store under the same name, lacks it (its tokens are its own).
The first row stands for "before any logged change". Rows no saved sidecar needs are deleted
at close (:func:`prunable`, :func:`prune`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

_CHUNK = 500  # ids per query when the memories logged are read


class Stamp(NamedTuple):
    """A row of the change log: what a saved sidecar holds is the store as of this row."""

    seq: int
    token: int


def head(conn: sqlite3.Connection) -> Stamp | None:
    """The log's last row (None in a file older than the log)."""
    try:
        row = conn.execute("SELECT seq, token FROM change_log ORDER BY seq DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:  # no such table: a read-only store not yet migrated
        return None
    return Stamp(int(row[0]), int(row[1])) if row else None


def holds(conn: sqlite3.Connection, stamp: Stamp) -> bool:
    """Whether the log still holds ``stamp``'s row, with its token."""
    try:
        row = conn.execute("SELECT token FROM change_log WHERE seq = ?", (stamp.seq,)).fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None and int(row[0]) == stamp.token


def changed_since(conn: sqlite3.Connection, stamp: Stamp) -> list[str]:
    """The memories logged after ``stamp``, each once, in no particular order."""
    rows = conn.execute(
        "SELECT DISTINCT memory_id FROM change_log WHERE seq > ? AND memory_id != ''",
        (stamp.seq,),
    )
    return [r[0] for r in rows]


def stored_since(
    conn: sqlite3.Connection, stamp: Stamp, top: int, columns: str = "rowid"
) -> list[tuple] | None:
    """``rowid`` and ``columns`` of ``memories`` for each memory logged after ``stamp``, when
    every one is still stored with a rowid past ``top`` — all of them stored since a sidecar
    that had seen rowids up to ``top``, nothing it holds changed; else None."""
    changed = changed_since(conn, stamp)
    found: list[tuple] = []
    for start in range(0, len(changed), _CHUNK):
        chunk = changed[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        found += conn.execute(
            f"SELECT rowid, {columns} FROM memories WHERE id IN ({marks})", chunk
        ).fetchall()
    if len(found) != len(changed) or any(r[0] <= top for r in found):
        return None
    return found


def prunable(conn: sqlite3.Connection, saved: Iterable[Stamp | None]) -> int | None:
    """The log's first row any of the ``saved`` sidecars' stamps needs — the oldest the log
    still holds, else the last row — when there are rows before it to delete; else None."""
    last = head(conn)
    if last is None:
        return None
    needed = [s.seq for s in saved if s is not None and holds(conn, s)]
    keep = min(needed, default=last.seq)
    first = conn.execute("SELECT min(seq) FROM change_log").fetchone()[0]
    return keep if first is not None and first < keep else None


def prune(conn: sqlite3.Connection, keep: int) -> None:
    """Delete the log's rows before ``keep`` (the caller holds a write transaction)."""
    conn.execute("DELETE FROM change_log WHERE seq < ?", (keep,))
