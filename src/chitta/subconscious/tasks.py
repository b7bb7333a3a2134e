"""The subconscious's tasks: each sweeps the whole store a bounded step at a time.

A step reads the next batch of memories (in id order, by key, so nothing is held open between
steps), does its work on them in one short write, and says whether the sweep ended. The
worker (subconscious/worker.py) decides when a step runs; a task knows only what one step is.

- ``decay``: each memory's kind decay since it was last decayed, and its tier with it
  (subconscious/decay.py). Memories decayed less than half an interval ago are left: a sweep
  after a manual `chitta decay` writes nothing again.
- ``hygiene``: the batch's near-duplicate clusters merged into their best-written member and
  its value conflicts counted (chitta/hygiene.py); every merge of one sweep in one realm is one
  run, undone whole by `chitta hygiene --undo RUN`.
- ``indexes``: the derived indexes' upkeep. The attractors (recall/attractors.py) of every
  realm a recall asked for lately are found again before their cache entry expires, so no
  recall pays for finding them; the themes (store/themes.py), when a recall has built them,
  are re-examined ``batch`` memories a step, each moved to a theme that fits it better (every
  write does this for 4). Neither writes to the store.
- ``distill``: with a model configured (``distill.toml``), one batch of one finished agent
  session a step, sent to the model and its curated memories stored (distill/sessions.py);
  the model's answer is waited for outside the writer lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

from chitta import hygiene
from chitta.distill.sessions import Distiller
from chitta.recall.attractors import TTL_S
from chitta.store.records import Memory
from chitta.subconscious.decay import MS_PER_DAY, decay_some

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.store.base import Store

#: A step's way to hold off every other writer while it writes (the daemon's writer lock).
Writing = Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True, slots=True)
class Step:
    """What one step did: memories read, memories changed, task-specific counts, and
    whether the sweep ended with it."""

    seen: int = 0
    changed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    finished: bool = False


class Task(Protocol):
    """One kind of upkeep, done a step at a time."""

    name: str
    #: Seconds between the end of one sweep and the start of the next (0: on demand).
    interval_s: int

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        """Do the next bounded piece of the sweep (starting one if none is under way),
        writing only under ``writing``."""

    def reset(self) -> None:
        """Drop the sweep under way (after a failure: the next starts from the beginning)."""


class _Sweep:
    """The memories of the store in id order, ``batch`` at a time, across steps."""

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self._memories: Iterator[Memory] | None = None

    def next_batch(self, store: Store) -> list[Memory]:
        if self._memories is None:
            self._memories = store.iter_memories(batch=self.batch)
        found = list(islice(self._memories, self.batch))
        if len(found) < self.batch:
            self._memories = None  # the sweep ends with this batch
        return found

    @property
    def under_way(self) -> bool:
        return self._memories is not None

    def reset(self) -> None:
        self._memories = None


class DecayTask:
    """Decay and tier demotion, ``batch`` memories a step."""

    name = "decay"

    def __init__(self, interval_s: int, batch: int) -> None:
        self.interval_s = interval_s
        self._sweep = _Sweep(batch)
        # Half an interval: a memory decayed that recently (by hand, or by another daemon on
        # the same database) is left for the next sweep.
        self._min_days = interval_s / 2 * 1000 / MS_PER_DAY

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        with writing():
            batch = self._sweep.next_batch(chitta.store)
            done = decay_some(chitta.store, [m.id for m in batch], now, min_days=self._min_days)
        return Step(len(batch), done.changed, {"demoted": done.demoted},
                    finished=not self._sweep.under_way)  # fmt: skip

    def reset(self) -> None:
        self._sweep.reset()


class HygieneTask:
    """Near-duplicate merging, ``batch`` memories (and their neighbours) a step."""

    name = "hygiene"

    def __init__(self, interval_s: int, batch: int) -> None:
        self.interval_s = interval_s
        self._sweep = _Sweep(batch)
        self._started: int | None = None  # the sweep's start: its runs are named by it

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        if not self._sweep.under_way or self._started is None:
            self._started = now
        store = chitta.store
        merged = conflicts = 0
        with writing():
            batch = self._sweep.next_batch(store)
            for realm in sorted({m.realm for m in batch}):
                found = hygiene.plan_among(store, realm, batch)
                conflicts += len(found.conflicts)
                if found.merges:
                    done = hygiene.apply(store, found, now, run=f"{realm}:{self._started}")
                    merged += sum(len(m.merged) for m in done.merges)
        return Step(len(batch), merged, {"merged": merged, "conflicts": conflicts},
                    finished=not self._sweep.under_way)  # fmt: skip

    def reset(self) -> None:
        self._sweep.reset()
        self._started = None


class IndexTask:
    """Attractors found again before they expire, and themes re-examined in steps."""

    name = "indexes"

    def __init__(self, interval_s: int, batch: int) -> None:
        self.interval_s = interval_s
        self.batch = batch
        self._left: int | None = None  # theme rows still to re-examine in this sweep

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        from chitta.recall.lanes import LANES  # the lanes' own caches: what recalls read

        counts = {"attractors": 0, "reassessed": 0}
        themes = chitta.store.themes_built()
        if self._left is None:
            # Entries that would expire before the next sweep (and a margin) are renewed.
            ahead = min(TTL_S, 2 * self.interval_s)
            cache = getattr(LANES.get("graph"), "attractors", None)
            counts["attractors"] = cache.refresh(chitta.store, ahead) if cache else 0
            self._left = len(themes) if themes is not None else 0
        if themes is not None and self._left > 0:
            counts["reassessed"] = themes.settle(min(self.batch, self._left))
            self._left -= self.batch
        finished = self._left <= 0 or themes is None
        if finished:
            self._left = None
        return Step(counts["reassessed"], 0, counts, finished=finished)

    def reset(self) -> None:
        self._left = None


class DistillTask:
    """Model distillation of finished sessions, one batch a step (distill/sessions.py)."""

    name = "distill"

    def __init__(self, interval_s: int, distiller: Distiller) -> None:
        self.interval_s = interval_s
        self.distiller = distiller

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        # The model is asked outside ``writing``: a minute's wait must not hold back the
        # daemon's writes.
        counts = self.distiller.step(chitta, now, writing)
        done = counts.get("sessions", 0)
        # A batch answered: the next may be due at once. Nothing due, or the endpoint failing:
        # the sweep ends, and the next is an interval away (the breaker's cooldown is one).
        stop = not done or counts.get("breaker_open", 0) > 0 or counts.get("failed", 0) > 0
        return Step(done, counts.get("stored", 0), dict(counts), finished=stop)

    def reset(self) -> None:
        """Nothing to drop: what waits is in the store."""

    def status(self) -> dict[str, Any]:
        """Its models and its circuit breaker, for `chitta status`."""
        return self.distiller.status()
