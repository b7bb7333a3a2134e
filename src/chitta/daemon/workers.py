"""The daemon's worker threads: reads side by side, writes on a worker of their own.

Writes run one at a time anyway (the writer lock), so one thread is all they need, and with
it no number of slow reads can keep a write from starting before its deadline (measured
before it existed: under 20 slow reads, 58 of 60 writes never got a worker in time). Reads
share a pool that grows with load up to ``workers`` threads; at most ``max_waiting`` wait for
one, and a read past that is refused as busy at once rather than queued to wait out its
deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from chitta.daemon import protocol

#: Reads that may wait for a worker, per worker.
WAITING_PER_WORKER = 4


class Workers:
    """Where requests run: a pool for reads, one thread for writes."""

    def __init__(self, workers: int, max_waiting: int | None = None) -> None:
        self.workers = workers
        self.max_waiting = WAITING_PER_WORKER * workers if max_waiting is None else max_waiting
        self.refused = 0  # reads turned away as busy since the start
        self._reads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chitta-read")
        self._writes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chitta-write")
        self._waiting = 0
        self._writes_waiting = 0
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """Reads waiting for a worker now."""
        with self._lock:
            return self._waiting

    def submit(self, work: Callable[[], Any], *, writes: bool) -> Future:
        """Run ``work`` on the writer's thread (``writes``) or a read worker. A read with
        ``max_waiting`` others waiting is refused (:class:`~protocol.ProtocolError`,
        ``BUSY``); after :meth:`shutdown`, RuntimeError."""
        if writes:
            return self._submit_write(work)
        with self._lock:
            if self._waiting >= self.max_waiting:
                self.refused += 1
                raise protocol.ProtocolError(
                    protocol.BUSY,
                    f"{self._waiting} reads already wait for the daemon's {self.workers} "
                    "workers; try again shortly",
                )
            self._waiting += 1

        def started() -> Any:
            self._left_queue()
            return work()

        try:
            future = self._reads.submit(started)
        except RuntimeError:
            self._left_queue()
            raise
        # Cancelled before it started (its caller's deadline passed): it leaves the queue now.
        future.add_done_callback(lambda f: self._left_queue() if f.cancelled() else None)
        return future

    @property
    def writes_waiting(self) -> int:
        """Writes queued behind the one running (the embedding queue defers under load)."""
        with self._lock:
            return self._writes_waiting

    def _submit_write(self, work: Callable[[], Any]) -> Future:
        with self._lock:
            self._writes_waiting += 1

        def started() -> Any:
            with self._lock:
                self._writes_waiting -= 1
            return work()

        try:
            future = self._writes.submit(started)
        except RuntimeError:
            with self._lock:
                self._writes_waiting -= 1
            raise

        def dropped(f: Future) -> None:
            if f.cancelled():
                with self._lock:
                    self._writes_waiting -= 1

        future.add_done_callback(dropped)
        return future

    def shutdown(self) -> None:
        """Stop taking work; what has not started is dropped."""
        for pool in (self._reads, self._writes):
            pool.shutdown(wait=False, cancel_futures=True)

    def _left_queue(self) -> None:
        with self._lock:
            self._waiting -= 1
