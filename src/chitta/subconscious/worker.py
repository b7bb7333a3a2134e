"""The subconscious: a daemon's background worker for upkeep (seed 001, Subconscious).

One thread runs the tasks (subconscious/tasks.py) a step at a time, never inside a request:
the sweeps on a schedule (decay, hygiene, the derived indexes) and, when a daemon gives it
its embedding queue, the embedding of memories stored without a vector
(subconscious/embedding.py), which goes first and runs as soon as a memory waits.

- **Bounded share.** After each step it rests so that its CPU time is at most ``share`` of
  the time (subconscious/schedule.py); a step is one short transaction (a hundred memories
  at most: 11 ms of work at 100,000 memories, and the commit's sync to disk).
- **Requests first.** A step waits while requests are in flight, up to ``max_defer_s``; it
  holds the daemon's writer lock only while it writes, so a write request waits at most one
  step for it.
- **What it did, kept.** Each finished sweep is recorded in the store's meta table
  (``upkeep:<task>``: when, how long, what changed), which `chitta status` shows and from
  which the next sweep is timed after a restart.
- **Stops cleanly.** :meth:`Subconscious.stop` lets the step under way finish (its
  transaction commits whole) and starts no other; a sweep cut short starts again next time.
  Its work is idempotent (decay is timed from each memory's own ``decayed_at``; a merge
  re-reads its members), so a daemon killed mid-step loses only the step's own change.

Nothing it logs names a memory's text: counts, ids of runs and timings only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chitta.distill.sessions import Distiller
from chitta.subconscious.embedding import EmbedQueue, EmbedTask
from chitta.subconscious.schedule import UpkeepSettings, next_due, rest_after
from chitta.subconscious.tasks import DecayTask, DistillTask, HygieneTask, IndexTask, Step, Task

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.store.base import Store

log = logging.getLogger(__name__)

#: The store's meta key prefix of each task's last finished sweep.
META_PREFIX = "upkeep:"
#: How often a waiting worker looks again whether requests are still in flight (seconds).
DEFER_POLL_S = 0.02
#: The longest it sleeps at once with nothing due (seconds): a clock moved forward (a test's,
#: or CHITTA_CLOCK_OFFSET_MS's) is seen this soon.
MAX_SLEEP_S = 60.0
#: After a failed step the task is retried this much later (seconds), or at its interval.
RETRY_S = 300


@dataclass(slots=True)
class _State:
    """One task's figures since the worker started, and its sweep under way."""

    due_ms: int
    steps: int = 0
    busy_s: float = 0.0
    sweep: dict[str, Any] | None = None  # the sweep under way: started_ms, seen, changed, …
    last: dict[str, Any] | None = None  # the last finished sweep (from the store at first)
    error: str | None = None


def last_sweeps(store: Store) -> dict[str, dict[str, Any]]:
    """Each scheduled task's last finished sweep as recorded in ``store`` (for `chitta
    status` with or without a daemon); a record that cannot be read is left out."""
    found: dict[str, dict[str, Any]] = {}
    for name in (DecayTask.name, HygieneTask.name, IndexTask.name):
        raw = store.meta(META_PREFIX + name)
        with contextlib.suppress(ValueError, TypeError):
            record = json.loads(raw) if raw else None
            finished = record.get("finished_ms") if isinstance(record, dict) else None
            if isinstance(finished, int) and not isinstance(finished, bool):
                found[name] = record
    return found


def _distilling(chitta: Chitta, settings: UpkeepSettings) -> list[Task]:
    """The distillation task, when a model is configured and distillation is on."""
    if not (chitta.distill and chitta.distill_settings.model_configured):
        return []
    return [DistillTask(settings.distill_s, Distiller(chitta.distill_settings))]


class Subconscious:
    """The upkeep worker of one daemon (module docstring)."""

    def __init__(
        self,
        chitta: Chitta,
        settings: UpkeepSettings,
        *,
        clock: Callable[[], int] | None = None,
        writer: threading.Lock | None = None,
        busy: Callable[[], bool] = lambda: False,
        queue: EmbedQueue | None = None,
    ) -> None:
        self.chitta = chitta
        self.store = chitta.store
        self.settings = settings
        #: The store's now, in ms (a test moves it; so does a clock offset).
        self.clock = clock if clock is not None else chitta.clock
        self._writer = writer if writer is not None else threading.Lock()
        self._busy = busy
        self.tasks: list[Task] = [t for t in (
            DecayTask(settings.decay_s, settings.decay_batch),
            HygieneTask(settings.hygiene_s, settings.hygiene_batch),
            IndexTask(settings.indexes_s, settings.themes_batch),
            *_distilling(chitta, settings),
        ) if t.interval_s > 0]  # fmt: skip
        self.queue = queue
        self.embed = EmbedTask(queue) if queue is not None else None
        self.started_ms = self.clock()
        self._started = time.monotonic()
        recorded = last_sweeps(self.store)
        self._state = {
            t.name: _State(
                due_ms=next_due(recorded.get(t.name, {}).get("finished_ms"), t.interval_s,
                                self.started_ms, settings.start_s),
                last=recorded.get(t.name),
            )
            for t in self.tasks
        }  # fmt: skip
        if self.embed is not None:
            self._state[self.embed.name] = _State(
                due_ms=next_due(None, 0, self.started_ms, settings.start_s)
            )
        self._lock = threading.Lock()  # guards _state against status() from other threads
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        if queue is not None:
            queue.notify = self.wake

    # --- the thread -----------------------------------------------------------------------

    def start(self) -> None:
        """Run the worker on a thread of its own (nothing when it is off or has no task)."""
        if not self.settings.enabled or self._thread is not None:
            return
        if not self.tasks and self.embed is None:
            return
        self._thread = threading.Thread(target=self._run, name="chitta-upkeep", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the step under way, start no other, and wait for the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def drain(self) -> int:
        """Embed every memory still waiting, now, on the caller's thread (a daemon stopping,
        once no request runs: at most the queue's bound), then the sentences still waiting;
        how many got their vectors."""
        if self.embed is None or self.queue is None:
            return 0
        given = 0
        while ids := self.queue.take(self.embed.batch):
            try:
                given += self.chitta.embed_waiting(ids, self._writing).embedded
            except Exception:  # noqa: BLE001 - they stay in the store; the next daemon embeds them
                log.warning("upkeep: %d memories are left without vectors until the next start",
                            len(self.queue), exc_info=True)  # fmt: skip
                break
            self.queue.done(ids)
        while self.queue.sentences_waiting():
            try:
                self.embed.sentences_step(self.chitta, self._writing)
            except Exception:  # noqa: BLE001 - marked in the store: the next daemon embeds them
                log.warning("upkeep: %d memories are left without their sentences' vectors "
                            "until the next start", self.queue.sentences_waiting(),
                            exc_info=True)  # fmt: skip
                break
        return given

    def wake(self) -> None:
        """Look for work now (a memory joined the embedding queue), not at the next due
        time; a rest under way is still kept."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            worked, pause = self._tick()
            if worked:
                self._stop.wait(pause)  # the pace: a rest is kept whatever wakes it
            else:
                self._wake.wait(pause)
                self._wake.clear()

    # --- one step -------------------------------------------------------------------------

    def tick(self) -> float:
        """Run one step of the task most in need, if one is due; the seconds to rest before
        the next tick."""
        return self._tick()[1]

    def _tick(self) -> tuple[bool, float]:
        """(whether a step ran, the seconds to wait before the next tick)."""
        task = self._next()
        if task is None:
            return False, self._until_due()
        self._wait_for_quiet()
        if self._stop.is_set():
            return False, 0.0
        # The pace counts this thread's own CPU time: a step that waited for a lock (a
        # recall building an index holds the store's) did not use the core meanwhile.
        started, wall = time.thread_time(), time.perf_counter()
        try:
            step = task.step(self.chitta, self.clock(), self._writing)
        except Exception as exc:  # noqa: BLE001 - upkeep must never take the daemon down
            busy = time.thread_time() - started
            self._failed(task, exc, busy)
            return True, rest_after(busy, self.settings.share)
        busy = time.thread_time() - started
        self._record(task, step, busy, time.perf_counter() - wall)
        return True, rest_after(busy, self.settings.share)

    def _next(self) -> Task | None:
        """The embedding queue when it has work, else the most overdue sweep, else None
        (always None while the store is read-only: every task writes)."""
        if self.store.read_only is not None:
            return None
        now = self.clock()
        if self.embed is not None and self.embed.wanted():
            with self._lock:
                state = self._state[self.embed.name]
                due, failed = state.due_ms, state.error is not None
            # Memories waiting go at once (unless a failure asked for a pause); a look for
            # leftovers in the store waits for the start delay, like the sweeps.
            if due <= now or (self.queue is not None and self.queue.has_work() and not failed):
                return self.embed
        due = [t for t in self.tasks if self._state[t.name].due_ms <= now]
        return min(due, key=lambda t: self._state[t.name].due_ms) if due else None

    def _until_due(self) -> float:
        """Seconds until the next sweep is due (at most MAX_SLEEP_S)."""
        names = [t.name for t in self.tasks]
        if self.embed is not None and self.embed.wanted():  # else a memory's arrival wakes it
            names.append(self.embed.name)
        if not names:
            return MAX_SLEEP_S
        wait_ms = min(self._state[n].due_ms for n in names) - self.clock()
        return min(MAX_SLEEP_S, max(wait_ms / 1000, DEFER_POLL_S))

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        with self._writer:
            yield

    def _wait_for_quiet(self) -> None:
        """Wait while requests are in flight, up to ``max_defer_s`` (or a stop)."""
        deadline = time.monotonic() + self.settings.max_defer_s
        while self._busy() and time.monotonic() < deadline and not self._stop.is_set():
            self._stop.wait(DEFER_POLL_S)

    def _record(self, task: Task, step: Step, busy: float, wall: float) -> None:
        now = self.clock()
        with self._lock:
            state = self._state[task.name]
            state.steps += 1
            state.busy_s += busy
            state.error = None
            sweep = state.sweep or {"started_ms": now, "steps": 0, "seen": 0, "changed": 0,
                                    "busy_ms": 0.0, "wall_ms": 0.0}  # fmt: skip
            sweep["steps"] += 1
            sweep["seen"] += step.seen
            sweep["changed"] += step.changed
            sweep["busy_ms"] = round(sweep["busy_ms"] + busy * 1000, 1)  # CPU time
            sweep["wall_ms"] = round(sweep["wall_ms"] + wall * 1000, 1)  # with lock waits
            for key, n in step.counts.items():
                sweep[key] = sweep.get(key, 0) + n
            if not step.finished:
                state.sweep = sweep
                state.due_ms = now  # the next step at the next tick, after the rest
                return
            state.sweep = None
            state.last = {**sweep, "finished_ms": now}
            state.due_ms = now + task.interval_s * 1000
            record = state.last
        if not task.interval_s:
            return  # on demand (the embedding queue): its figures are this run's only
        log.info("upkeep: %s swept %d memories, changed %d, in %.0f ms of work", task.name,
                 record["seen"], record["changed"], record["busy_ms"])  # fmt: skip
        try:
            with self._writer:
                self.store.set_meta(META_PREFIX + task.name, json.dumps(record))
        except Exception:  # noqa: BLE001 - the record is for status; the work is done
            log.warning("upkeep: could not record the %s sweep", task.name, exc_info=True)

    def _failed(self, task: Task, exc: Exception, busy: float) -> None:
        task.reset()
        # The error's class and text (a store error names a file or a limit, never a memory's
        # text); the traceback at debug level only.
        why = f"{type(exc).__name__}: {exc}"
        log.warning("upkeep: %s failed (%s); it runs again later", task.name, why)
        log.debug("upkeep: %s failed", task.name, exc_info=True)
        with self._lock:
            state = self._state[task.name]
            state.busy_s += busy
            state.sweep = None
            state.error = why
            state.due_ms = self.clock() + min(RETRY_S, task.interval_s or RETRY_S) * 1000

    # --- figures --------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What the worker does and did, for `chitta status` (counts and times only)."""
        up = max(time.monotonic() - self._started, 1e-9)
        every = [*self.tasks, *([self.embed] if self.embed is not None else [])]
        with self._lock:
            tasks = {
                t.name: {
                    "interval_s": t.interval_s,
                    "due_ms": s.due_ms,
                    "under_way": dict(s.sweep) if s.sweep else None,
                    "last": dict(s.last) if s.last else None,
                    "error": s.error,
                    "steps": s.steps,
                }  # fmt: skip
                for t in every
                for s in [self._state[t.name]]
            }
            busy = sum(s.busy_s for s in self._state.values())
        if self.queue is not None:
            tasks["embed"].update(waiting=len(self.queue), deferred=self.queue.deferred,
                                  sentences_waiting=self.queue.sentences_waiting())  # fmt: skip
        for task in self.tasks:
            own = getattr(task, "status", None)  # a task's own figures, if it keeps any
            if own is not None:
                tasks[task.name].update(own())
        running = self._thread is not None and self._thread.is_alive()
        return {"running": running, "enabled": self.settings.enabled,
                "share": self.settings.share, "used_share": round(busy / up, 4),
                "busy_s": round(busy, 3), "tasks": tasks}  # fmt: skip
