"""Document frequency of words per realm, kept in memory beside the store.

Recall asks it which words of a query are common in the realm (a speaker's name that starts
every turn, a project's own name) so that they do not drown the distinctive ones. Derived
from the live memories, rebuilt from the file on first use, kept in step with writes.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable
from itertools import chain, islice

_WORD = re.compile(r"\w+", re.UNICODE)

#: Words too common to say what a query is about. Dropped from keyword queries unless the
#: query has nothing else, so "why not our own log?" searches for "log". "s" and "t" are what
#: is left of "Alice's" and "don't" after tokenising.
_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
#: Memories counted per step of :meth:`TermStats.add_all` (bounds what it holds at once).
BUILD_CHUNK = 20_000


def words(text: str) -> set[str]:
    """The distinct lower-case words of ``text``."""
    if text.isascii():
        # The same words, lower-cased in one pass: lower-casing ASCII makes no letter a
        # non-word character (it can elsewhere: "İ" becomes "i" and a combining dot).
        return set(_WORD.findall(text.lower()))
    return {w.lower() for w in _WORD.findall(text)}


def tokens(text: str) -> list[str]:
    """The lower-case words of ``text`` in order, repeats kept (for counting, BM25)."""
    return [w.lower() for w in _WORD.findall(text)]


class TermStats:
    """For each realm: how many live memories it has, and how many contain each word; and
    how many times its memories were counted in or out since this count began (the keyword
    search's row table, store/sqlite/keywords.py, reads that to know a realm changed)."""

    def __init__(self) -> None:
        self._df: dict[str, Counter[str]] = {}
        self._size: Counter[str] = Counter()
        self._changes: Counter[str] = Counter()
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
            self._changes[realm] += 1

    def add_all(self, rows: Iterable[tuple[str, str]]) -> None:
        """Count many live memories in at once, as (realm, text): a build from the file,
        counted in C rather than word by word (about a third quicker at 100,000)."""
        rows = iter(rows)
        while chunk := list(islice(rows, BUILD_CHUNK)):
            texts: dict[str, list[str]] = {}
            for realm, text in chunk:
                texts.setdefault(realm, []).append(text)
            for realm, mine in texts.items():
                counted = Counter(chain.from_iterable(map(words, mine)))
                with self._lock:
                    self._df.setdefault(realm, Counter()).update(counted)
                    self._size[realm] += len(mine)
                    self._changes[realm] += len(mine)

    @classmethod
    def restored(cls, realms: dict[str, tuple[int, dict[str, int]]]) -> TermStats:
        """Statistics as :meth:`snapshot` gave them (each realm's size and word counts),
        with no changes counted yet."""
        stats = cls()
        for realm, (size, df) in realms.items():
            stats._df[realm] = Counter(df)
            stats._size[realm] = size
        return stats

    def snapshot(self) -> dict[str, tuple[int, dict[str, int]]]:
        """Each realm's size and word counts, copied (what a sidecar saves)."""
        with self._lock:
            return {realm: (self._size[realm], dict(counts)) for realm, counts in self._df.items()}

    def touch(self, realm: str) -> None:
        """Count a change of a live memory of ``realm`` that leaves its words as they were (its
        tags): whoever keeps other state of the realm's rows in step reads them again."""
        with self._lock:
            self._changes[realm] += 1

    def changes(self) -> dict[str, int]:
        """For each realm: how many times a memory was counted in or out of it (a write, a
        forget, a restore, an edit, a purge), since this count began."""
        with self._lock:
            return dict(self._changes)

    def common(self, least: int) -> list[str]:
        """The words at least ``least`` live memories of some realm contain, the most
        contained first (summed over the realms)."""
        with self._lock:
            counted: Counter[str] = Counter()
            for counts in self._df.values():
                counted.update({w: n for w, n in counts.items() if n >= least})
        return [word for word, _ in counted.most_common()]

    def total(self) -> int:
        """Live memories counted, over every realm."""
        with self._lock:
            return sum(self._size.values())

    def size(self, realm: str) -> int:
        with self._lock:
            return self._size[realm]

    def df(self, realm: str, word: str) -> int:
        """How many live memories of ``realm`` contain ``word`` (lower-case)."""
        with self._lock:
            counts = self._df.get(realm)
            return counts[word] if counts else 0
