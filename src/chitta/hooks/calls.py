"""Daemon calls in parallel threads under one deadline: what is not back in time is dropped.

Each call runs on its own thread with its own connection (a :class:`DaemonClient` is not
thread-safe). The caller joins the threads against the deadline and never waits past it:
the threads are daemon threads, so a late one is abandoned and dies with the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chitta.daemon.client import DaemonClient
from chitta.errors import ChittaError


@dataclass(frozen=True, slots=True)
class Call:
    """One named daemon request."""

    name: str
    method: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of a call: its result, or why there is none (``timeout`` or ``error``)."""

    name: str
    result: dict[str, Any] | None = None
    failure: str | None = None  # None, "timeout" or "error"
    message: str = ""


def _run(path: Path, call: Call, deadline: float, slots: dict[str, Outcome]) -> None:
    try:
        # The socket timeout bounds the thread itself, so an abandoned one ends soon too.
        timeout = max(deadline - time.monotonic(), 0.001)
        with DaemonClient(path, timeout_s=timeout) as client:
            result = client.call(call.method, **call.params)
        slots[call.name] = Outcome(call.name, result=result)
    except (ChittaError, OSError, ValueError, KeyError) as exc:
        # A socket that timed out at the deadline is a late lane, not a broken one.
        late = time.monotonic() >= deadline
        slots[call.name] = Outcome(call.name, failure="timeout" if late else "error",
                                   message=str(exc))  # fmt: skip


def run_calls(path: Path, calls: Sequence[Call], deadline: float) -> list[Outcome]:
    """Run ``calls`` side by side; each outcome in call order, a call still running at
    ``deadline`` (a ``time.monotonic()`` value) becoming a ``timeout``."""
    if time.monotonic() >= deadline:  # the budget is spent already: start nothing
        return [Outcome(c.name, failure="timeout") for c in calls]
    slots: dict[str, Outcome] = {}
    threads = [
        threading.Thread(
            target=_run, args=(path, c, deadline, slots), daemon=True, name=f"chitta-hook-{c.name}"
        )  # fmt: skip
        for c in calls
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.0))
    done = dict(slots)  # a snapshot: a thread finishing now is already too late
    return [done.get(c.name) or Outcome(c.name, failure="timeout") for c in calls]
