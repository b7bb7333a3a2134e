"""Warming a store: building its in-process indexes before the first recall needs them."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping


def timed_parts(
    parts: Mapping[str, Callable[[], object]], stop: Callable[[], bool] | None = None
) -> dict[str, float]:
    """Call each of ``parts`` in order, none once ``stop()`` is true: the milliseconds each
    called part took, by name (0.1 ms)."""
    took = {}
    for name, build in parts.items():
        if stop is not None and stop():
            break
        start = time.perf_counter()
        build()
        took[name] = round((time.perf_counter() - start) * 1000, 1)
    return took
