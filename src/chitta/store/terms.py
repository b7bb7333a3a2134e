"""Document frequency of words per realm, kept in memory beside the store.

Recall asks it which words of a query are common in the realm (a speaker's name that starts
every turn, a project's own name) so that they do not drown the distinctive ones. Derived
from the live memories, rebuilt from the file on first use, kept in step with writes.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    """The distinct lower-case words of ``text``."""
    return {w.lower() for w in _WORD.findall(text)}


class TermStats:
    """For each realm: how many live memories it has, and how many contain each word."""

    def __init__(self) -> None:
        self._df: dict[str, Counter[str]] = {}
        self._size: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, realm: str, text: str, sign: int = 1) -> None:
        """Count a memory in (``sign`` 1) or out (``sign`` -1)."""
        with self._lock:
            counts = self._df.setdefault(realm, Counter())
            for word in words(text):
                counts[word] += sign
                if counts[word] <= 0:
                    del counts[word]
            self._size[realm] += sign

    def realms(self) -> list[str]:
        """The realms that have live memories."""
        with self._lock:
            return [realm for realm, n in self._size.items() if n > 0]

    def size(self, realm: str) -> int:
        return self._size[realm]

    def df(self, realm: str, word: str) -> int:
        """How many live memories of ``realm`` contain ``word`` (lower-case)."""
        counts = self._df.get(realm)
        return counts[word] if counts else 0
