"""Sortable unique ids: ULIDs (48-bit millisecond time + 80 random bits, Crockford base32).

Format from the ULID spec (github.com/ulid/spec); ids sort by creation time as text.
"""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(now_ms: int | None = None) -> str:
    """A new 26-character ULID for the current (or given) millisecond."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_id(text: str) -> bool:
    """Whether ``text`` looks like a ULID chitta made."""
    return len(text) == 26 and all(c in _ALPHABET for c in text.upper())
