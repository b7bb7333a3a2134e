"""Sortable unique ids: ULIDs (48-bit millisecond time + 80 random bits, Crockford base32).

Format from the ULID spec (github.com/ulid/spec), with its monotonic rule: within one
millisecond a process increments the random part instead of drawing a new one, so ids made
in order sort in that order. Ties in recall are broken by id, so this also keeps a benchmark
that imports the same turns twice ranking them the same way.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_lock = threading.Lock()
_last = (-1, 0)  # (ms, random part) of the last id made here


def new_id(now_ms: int | None = None) -> str:
    """A new 26-character ULID for the current (or given) millisecond."""
    global _last
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        last_ms, last_random = _last
        if ms == last_ms and last_random + 1 < (1 << _RANDOM_BITS):
            random_part = last_random + 1
        else:
            random_part = int.from_bytes(os.urandom(10), "big")
        _last = (ms, random_part)
    value = (ms << _RANDOM_BITS) | random_part
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_id(text: str) -> bool:
    """Whether ``text`` looks like a ULID chitta made."""
    return len(text) == 26 and all(c in _ALPHABET for c in text.upper())
