"""The daemon's warm-up: the store's in-process indexes built on a thread of their own as
soon as the socket listens (issue 24, "instant start").

Without it the first recall after a start built them (the term statistics, the keyword
search's rows, the vectors and any HNSW graph) while its caller waited. Now the daemon
answers from the moment it listens and builds them meanwhile; a recall that comes first
waits only for the part it needs, under the same lock the build holds (store/base.py
``warm``), and is answered from the whole of it. What each part took is in ``chitta
status``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chitta.store.base import Store

log = logging.getLogger(__name__)


class Warmup:
    """One warm-up of ``store``, run once by :meth:`start`; ``done`` is called at its end
    (the daemon counts it as work in flight until then)."""

    def __init__(self, store: Store, stopping: Callable[[], bool], done: Callable[[], None]):
        self._store = store
        self._stopping = stopping
        self._done = done
        self._state = "not started"
        self._parts: dict[str, float] = {}
        self._total_ms: float | None = None

    def start(self) -> None:
        self._state = "warming"
        try:
            threading.Thread(target=self._run, daemon=True, name="chitta-warmup").start()
        except RuntimeError:  # no thread to be had: the first recall builds what it needs
            self._state = "failed"
            log.warning("warm-up not started: no thread could be started for it")
            self._done()

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self._parts = self._store.warm(self._stopping)
            self._state = "stopped" if self._stopping() else "ready"
        except Exception as exc:  # noqa: BLE001 - a recall builds what is missing on first use
            self._state = "failed"
            log.warning("warm-up failed (%s); the first recall builds what is missing",
                        type(exc).__name__)  # fmt: skip
            log.debug("warm-up failure", exc_info=True)
        finally:
            self._total_ms = round((time.perf_counter() - started) * 1000, 1)
            self._done()
        log.info("warm-up %s in %.0f ms", self._state, self._total_ms)

    def status(self) -> dict[str, Any]:
        """``state`` (warming, ready, stopped, failed), the milliseconds of each part built
        and of the whole (None while warming)."""
        return {"state": self._state, "parts_ms": dict(self._parts), "total_ms": self._total_ms}
