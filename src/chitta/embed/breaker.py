"""A circuit breaker for remote backends (seed 001): fail fast while a backend is down.

CLOSED: calls pass; ``failure_threshold`` consecutive failures open the circuit.
OPEN: calls are refused with :class:`CircuitOpen` without running, for ``cooldown_s``.
HALF_OPEN: after the cooldown one call runs as a probe; success closes the circuit,
failure opens it again with a fresh cooldown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

from chitta.errors import CircuitOpen

T = TypeVar("T")


class BreakerState(StrEnum):
    """Where the breaker is in its cycle."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Counts consecutive failures of calls made through it and refuses calls while open."""

    def __init__(
        self,
        failure_threshold: int = 3,
        cooldown_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        name: str = "backend",
    ) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if cooldown_s < 0:
            raise ValueError("cooldown_s must not be negative")
        self.failure_threshold = failure_threshold
        self.cooldown_s = cooldown_s
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._state = BreakerState.CLOSED
        self._consecutive = 0
        self._opened_at = 0.0
        self._last_error: str | None = None
        self._probing = False
        self._calls = 0
        self._successes = 0
        self._failures = 0
        self._refused = 0
        self._times_opened = 0

    @property
    def state(self) -> BreakerState:
        """The current state; an open breaker whose cooldown is over reports HALF_OPEN."""
        with self._lock:
            return self._current_state()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` if the circuit allows it, else :class:`CircuitOpen`."""
        probe = self._admit()
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            self._record_failure(exc, probe)
            raise
        except BaseException:
            # Ctrl-C or exit during a probe says nothing about the backend: let the next
            # call probe again instead of leaving the breaker stuck mid-probe.
            if probe:
                with self._lock:
                    self._probing = False
                    self._state = BreakerState.OPEN
            raise
        self._record_success()
        return result

    def stats(self) -> dict[str, Any]:
        """Counts and state for status display."""
        with self._lock:
            return {
                "state": str(self._current_state()),
                "consecutive_failures": self._consecutive,
                "failure_threshold": self.failure_threshold,
                "cooldown_s": self.cooldown_s,
                "cooldown_remaining_s": round(self._remaining(), 3),
                "calls": self._calls,
                "successes": self._successes,
                "failures": self._failures,
                "refused": self._refused,
                "times_opened": self._times_opened,
                "last_error": self._last_error,
            }

    # --- internals (callers hold self._lock where noted) -------------------------------------

    def _remaining(self) -> float:
        """Seconds of cooldown left (lock held)."""
        if self._state is BreakerState.CLOSED:
            return 0.0
        return max(0.0, self._opened_at + self.cooldown_s - self._clock())

    def _current_state(self) -> BreakerState:
        """The state as a caller would see it now (lock held)."""
        if self._state is BreakerState.OPEN and self._remaining() <= 0:
            return BreakerState.HALF_OPEN
        return self._state

    def _admit(self) -> bool:
        """Let a call through or raise :class:`CircuitOpen`; True when the call is the probe."""
        with self._lock:
            if self._state is BreakerState.CLOSED:
                self._calls += 1
                return False
            remaining = self._remaining()
            # One probe at a time: concurrent callers keep failing fast until it reports.
            if remaining <= 0 and not self._probing:
                self._state = BreakerState.HALF_OPEN
                self._probing = True
                self._calls += 1
                return True
            self._refused += 1
            wait = (
                "a probe call is in progress"
                if self._probing
                else f"retrying in {max(1, round(remaining))} s"
            )
            raise CircuitOpen(
                f"{self.name} circuit open after {self._consecutive} consecutive failures; "
                f"{wait} (last failure: {self._last_error})"
            )

    def _record_success(self) -> None:
        with self._lock:
            self._successes += 1
            self._consecutive = 0
            self._probing = False
            self._state = BreakerState.CLOSED

    def _record_failure(self, exc: Exception, probe: bool) -> None:
        with self._lock:
            self._failures += 1
            self._consecutive += 1
            self._last_error = str(exc) or type(exc).__name__
            if probe:
                self._probing = False
            if probe or self._consecutive >= self.failure_threshold:
                if self._state is not BreakerState.OPEN:
                    self._times_opened += 1
                self._state = BreakerState.OPEN
                self._opened_at = self._clock()
