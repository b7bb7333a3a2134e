"""Access history and co-access weights, recorded in batches.

A recall is a read. Recording that it happened — the access times ACT-R scoring needs, and
the Hebbian co-access weights of memories returned together — must not turn every read into
a synced write. So each recall's record goes into an in-memory buffer, which a background
thread writes in one transaction when :data:`FLUSH_EVERY` records are pending, at most
:data:`FLUSH_SECONDS` after a record arrives, and when the store closes. Reads merge the
buffer with the tables, so an access counts the moment it is recorded. A crash of the
process loses at most the unflushed buffer (docs/recall.md).

Only the last :data:`KEEP_ACCESSES` access times of a memory are kept; ``access_count`` keeps
the total, and the older accesses enter the activation through Petrov's approximation
(recall/scoring.py).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

log = logging.getLogger(__name__)

#: Access times kept per memory. With ACT-R's decay of 0.5 the most recent accesses dominate
#: the activation, and the rest is approximated from the total count (Petrov 2006), so a
#: memory recalled thousands of times still costs 32 rows.
KEEP_ACCESSES = 32
#: Pending records that wake the writer (a recall of limit 10 is one record of 10 ids).
FLUSH_EVERY = 64
#: Longest a record waits in the buffer before the writer flushes it, in seconds.
FLUSH_SECONDS = 2.0
#: The largest co-access weight a pair can reach.
MAX_CO_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class AccessRecord:
    """One recall's accesses: the ids it returned, when, and which of them count as together."""

    ids: tuple[str, ...]
    at: int  # ms since the epoch
    together: tuple[str, ...] = ()  # every pair of these gets ``step`` more co-access weight
    step: float = 0.0


@dataclass(frozen=True, slots=True)
class AccessHistory:
    """A memory's recent access times (newest first) and how many accesses it had in all."""

    times: tuple[int, ...]
    count: int


def pairs(ids: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Every unordered pair of distinct ids, each as ``(smaller, larger)``."""
    yield from combinations(sorted(set(ids)), 2)


def pair_increments(records: Iterable[AccessRecord]) -> dict[tuple[str, str], tuple[float, int]]:
    """Summed co-access increments per pair, with the time of the latest one."""
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for rec in records:
        if rec.step <= 0:
            continue
        for pair in pairs(rec.together):
            inc, at = out.get(pair, (0.0, 0))
            out[pair] = (inc + rec.step, max(at, rec.at))
    return out


class AccessLog:
    """The buffer of unwritten access records and the thread that writes them.

    ``write`` stores a batch in one transaction; ``mutex`` is the store's lock, held while a
    batch is taken and written, so that a reader holding it sees every record exactly once
    (either still in the buffer or already in the tables).
    """

    def __init__(
        self,
        write: Callable[[list[AccessRecord]], None],
        mutex: threading.RLock,
        *,
        every: int = FLUSH_EVERY,
        seconds: float = FLUSH_SECONDS,
    ) -> None:
        self._write = write
        self._mutex = mutex
        self.every = every
        self.seconds = seconds
        self._buffer_lock = threading.Lock()
        self._pending: list[AccessRecord] = []
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self.flushes = 0  # transactions written
        self.written = 0  # records written

    def record(self, rec: AccessRecord) -> None:
        """Buffer ``rec``; never writes, never waits for the store."""
        with self._buffer_lock:
            if self._stop:
                return
            self._pending.append(rec)
            full = len(self._pending) >= self.every
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="chitta-access-writer", daemon=True
                )
                self._thread.start()
        if full:
            self._wake.set()

    def pending(self) -> list[AccessRecord]:
        """The records not yet written (call with the store's mutex held)."""
        with self._buffer_lock:
            return list(self._pending)

    def flush(self) -> int:
        """Write every pending record in one transaction now; returns how many."""
        with self._mutex:
            with self._buffer_lock:
                batch, self._pending = self._pending, []
            if not batch:
                return 0
            try:
                self._write(batch)
            except BaseException:
                with self._buffer_lock:
                    self._pending = batch + self._pending
                raise
            self.flushes += 1
            self.written += len(batch)
            return len(batch)

    def stats(self) -> dict[str, int]:
        with self._buffer_lock:
            pending = len(self._pending)
        return {"pending": pending, "flushes": self.flushes, "written": self.written}

    def close(self) -> None:
        """Stop the writer and write what is left."""
        with self._buffer_lock:
            self._stop = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()
        self.flush()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.seconds)
            self._wake.clear()
            if self._stop:
                return  # close() flushes what is left
            try:
                self.flush()
            except Exception as exc:  # kept in the buffer; the next round tries again
                log.warning("access history flush failed (%s); will retry", type(exc).__name__)


# --- SQL: writing a batch and reading merged views --------------------------------------------


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
    touched = list(dict.fromkeys(i for rec in batch for i in rec.ids))
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
    for rec in pending:
        for i in rec.ids:
            if i in times:
                times[i].append(rec.at)
                counts[i] += 1
    return {
        i: AccessHistory(tuple(sorted(t, reverse=True)[:KEEP_ACCESSES]), max(counts[i], len(t)))
        for i, t in times.items()
    }


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
    for pair, (inc, _) in pair_increments(pending).items():
        if pair[0] in wanted and pair[1] in wanted:
            weights[pair] = min(MAX_CO_WEIGHT, weights.get(pair, 0.0) + inc)
    return weights


def read_neighbours(
    conn: sqlite3.Connection, memory_id: str, pending: Sequence[AccessRecord], limit: int
) -> list[tuple[str, float]]:
    """The memories most often returned with ``memory_id``: (id, weight), heaviest first."""
    weights: dict[str, float] = {}
    for a, b, w in conn.execute(
        "SELECT a, b, weight FROM co_access WHERE a = ? OR b = ?", (memory_id, memory_id)
    ):
        weights[b if a == memory_id else a] = w
    for (a, b), (inc, _) in pair_increments(pending).items():
        if memory_id in (a, b):
            other = b if a == memory_id else a
            weights[other] = min(MAX_CO_WEIGHT, weights.get(other, 0.0) + inc)
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:limit]
