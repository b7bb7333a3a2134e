"""Giving the daemon's memory back after a burst (glibc only; elsewhere these do nothing), and
keeping the cycle collector off what the daemon holds for long (:func:`settle`).

Measured before: 20 large recalls from 10 clients at once took the daemon from 254 to 444 MB
resident, and it stayed there. Two glibc habits keep freed memory: each thread that meets a
locked heap gets a heap (an "arena") of its own, up to 8 per core, and a freed block inside a
heap goes back to the system only when it is at the heap's top. So the daemon asks for few
arenas before its threads start (:func:`limit_arenas`) and trims every heap once it is quiet
(:func:`trim`, ``malloc_trim(0)``, which since glibc 2.8 releases free pages inside the heaps
too). A ``MALLOC_ARENA_MAX`` in the environment is left to decide.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import os
import sys

log = logging.getLogger(__name__)

#: mallopt's parameter for the most arenas (glibc's malloc.h).
_M_ARENA_MAX = -8
#: Arenas the daemon asks for: few heaps to trim, and little lock contention left with
#: Python's own allocator serving small objects.
ARENAS = 2
#: Objects in the collector's oldest generation at which :func:`settle` freezes them.
SETTLE_OBJECTS = 200_000


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None  # another C library (musl): none of this applies
        libc = ctypes.CDLL(None)
    except (OSError, ValueError):
        return None
    if not all(hasattr(libc, name) for name in ("mallopt", "malloc_trim")):
        return None
    return libc


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Ask glibc for at most ``arenas`` heaps (for threads started from now on); whether it
    was done."""
    libc = _glibc()
    if libc is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def trim() -> bool:
    """Give the free memory of every heap back to the system; whether any was."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.malloc_trim(0))


def settle(threshold: int = SETTLE_OBJECTS) -> bool:
    """Once the collector's oldest generation holds ``threshold`` objects, collect once and
    freeze what survives (``gc.freeze``); whether it did.

    What the daemon holds for long, the code index above all, the collector walks again on
    every full collection: with a 100,000-symbol repository's extracts and resolver index
    held (1.66 M objects) one pass took 0.92-0.96 s, a pause for whichever request met it
    (docs/benchmarks.md). Frozen objects are never walked again; they are still freed when
    nothing refers to them. The collection first frees the cycles among them; a cycle that
    forms among frozen objects later is kept until the daemon stops, which is why this runs
    only when so many objects have become old, not on every quiet spell."""
    if len(gc.get_objects(generation=2)) < threshold:
        return False
    gc.collect()
    gc.freeze()
    return True
