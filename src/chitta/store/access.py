"""Access history and co-access weights, recorded in batches.

A recall is a read. Recording that it happened — the access times ACT-R scoring needs, and
the Hebbian co-access weights of memories returned together — must not turn every read into
a synced write. So each recall's record goes into an in-memory buffer, which a background
thread writes in one transaction when :data:`FLUSH_EVERY` records are pending, at most
:data:`FLUSH_SECONDS` after a record arrives, and when the store closes. Reads merge the
buffer with the tables, so an access counts the moment it is recorded. A crash of the
process loses at most the unflushed buffer (docs/recall.md). A backend writes a batch and
reads the merged views in its own SQL (store/sqlite/access.py).

Only the last :data:`KEEP_ACCESSES` access times of a memory are kept; ``access_count`` keeps
the total, and the older accesses enter the activation through Petrov's approximation
(recall/scoring.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
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


# --- what both backends' reads add from the buffer (the SQL that reads the rows is theirs) ----


def with_pending_history(
    times: dict[str, list[int]], counts: dict[str, int], pending: Iterable[AccessRecord]
) -> dict[str, AccessHistory]:
    """Each id's history from its stored access times and count (``times`` holds every id
    asked for) with the buffered records added: its last :data:`KEEP_ACCESSES` times, newest
    first, and its total count."""
    for rec in pending:
        for i in rec.ids:
            if i in times:
                times[i].append(rec.at)
                counts[i] = counts.get(i, 0) + 1
    return {
        i: AccessHistory(tuple(sorted(t, reverse=True)[:KEEP_ACCESSES]),
                         max(counts.get(i, 0), len(t)))
        for i, t in times.items()
    }  # fmt: skip


def with_pending_pairs(
    weights: dict[tuple[str, str], float], wanted: set[str], pending: Iterable[AccessRecord]
) -> dict[tuple[str, str], float]:
    """Stored co-access ``weights`` among ``wanted`` with the buffer's increments added."""
    for pair, (inc, _) in pair_increments(pending).items():
        if pair[0] in wanted and pair[1] in wanted:
            weights[pair] = min(MAX_CO_WEIGHT, weights.get(pair, 0.0) + inc)
    return weights


def with_pending_partners(
    found: dict[str, dict[str, tuple[float, int]]], pending: Iterable[AccessRecord], limit: int
) -> dict[str, list[tuple[str, float, int]]]:
    """Each id's stored co-access partners (``found``: id → other → (weight, updated at))
    with the buffer's increments added: the ``limit`` heaviest, (other, weight, updated at),
    equal weights by id."""
    for (a, b), (inc, at) in pair_increments(pending).items():
        for mine, other in ((a, b), (b, a)):
            if mine in found:
                weight, when = found[mine].get(other, (0.0, 0))
                found[mine][other] = (min(MAX_CO_WEIGHT, weight + inc), max(when, at))
    return {
        memory_id: sorted(((o, w, t) for o, (w, t) in partners.items()),
                          key=lambda r: (-r[1], r[0]))[:limit]
        for memory_id, partners in found.items()
    }  # fmt: skip
