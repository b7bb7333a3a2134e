"""When the subconscious works and how much: its settings, and the two rules of its pace.

Pace (:func:`rest_after`): after a step that took ``busy`` seconds the worker rests
``busy × (1 − share) / share``, so over any stretch of work it holds at most ``share`` of one
core (and of the interpreter's lock, which is what a request thread would wait for). Timing
(:func:`next_due`): a task whose sweep is under way is due again after its rest; a finished
sweep is due again ``interval`` after it finished, which survives a restart because the
finish time is kept in the store.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The range of CHITTA_UPKEEP_SHARE, in percent of one core (inclusive).
SHARE_RANGE = (1, 50)
#: The range of CHITTA_UPKEEP_DEFER_AT (inclusive).
DEFER_AT_RANGE = (0, 1000)
#: The range of the CHITTA_UPKEEP_*_S intervals in seconds (inclusive); 0 turns a task off.
INTERVAL_RANGE = (0, 366 * 86_400)


@dataclass(frozen=True, slots=True)
class UpkeepSettings:
    """The subconscious's switches (docs/daemon.md, "Upkeep"); each is a CHITTA_UPKEEP_*
    variable."""

    #: CHITTA_UPKEEP: whether the daemon runs it at all.
    enabled: bool = True
    #: CHITTA_UPKEEP_SHARE (percent): the most of one core it takes while it works.
    share: float = 0.10
    #: CHITTA_UPKEEP_DECAY_S: a decay sweep (and tier demotion) this often; 0: never.
    decay_s: int = 21_600
    #: CHITTA_UPKEEP_HYGIENE_S: a hygiene sweep (duplicates merged) this often; 0: never.
    hygiene_s: int = 86_400
    #: CHITTA_UPKEEP_INDEXES_S: the attractors' and themes' upkeep this often; 0: never.
    indexes_s: int = 120
    #: CHITTA_UPKEEP_DISTILL_S: with a model configured (distill.toml), look for finished
    #: sessions to distil this often; 0: never.
    distill_s: int = 60
    #: CHITTA_UPKEEP_START_S: no upkeep this soon after the daemon starts (its first
    #: requests go first); a sweep that is overdue starts then.
    start_s: int = 30
    #: CHITTA_UPKEEP_DEFER_AT: writes waiting behind a ``remember`` at which it is stored
    #: at once and embedded by the worker (subconscious/embedding.py); 0: always.
    defer_at: int = 2
    #: Memories per decay step and per hygiene step (a step is one transaction).
    decay_batch: int = 100
    hygiene_batch: int = 32
    #: Theme memories re-examined per step of the indexes' upkeep.
    themes_batch: int = 512
    #: A step waits while requests are in flight, but for no longer than this (seconds):
    #: under steady load it still gets its share.
    max_defer_s: float = 2.0


def rest_after(busy_s: float, share: float) -> float:
    """Seconds to rest after ``busy_s`` seconds of work, to hold ``share`` of the time."""
    if busy_s <= 0:
        return 0.0
    return busy_s * (1.0 - share) / share


def next_due(finished_ms: int | None, interval_s: int, started_ms: int, start_s: int) -> int:
    """When (ms) a task whose last sweep finished at ``finished_ms`` (None: never) is next
    due, for a worker started at ``started_ms``: ``interval_s`` after the finish, and not
    before ``start_s`` after the start."""
    earliest = started_ms + start_s * 1000
    if finished_ms is None:
        return earliest
    return max(earliest, finished_ms + interval_s * 1000)
