"""Each keyword's doclist (the rows holding it, and how often), read once from the FTS5 index
and kept in memory under a byte bound.

Without it a keyword search read and decoded a common word's every occurrence on every query
(at 100,000 memories most of the ``kw`` lane's time, issue 24). A list covers the index's rows
up to :attr:`DoclistCache.upto`, every realm and forgotten rows too (the search keeps only the
live rows of the realms searched, keywords.Rows.realm), so forgetting and restoring do not
touch it.

The keyword search's row table (keywords.RowTable) keeps the cache in step with the file: rows
added since its last look are tokenized as the index tokenizes them (store/fts5.py) and
appended to the lists held; any other change of a realm's rows (an edit of text or tags, a
purge, a restore) or a restored backup starts an empty cache, as does a bulk import (reading
the lists again costs less than tokenizing thousands of rows).

Only a single token's list is kept: a term the tokenizer splits into a phrase (``parse_tags``)
is matched by its tokens' positions, read each time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chitta.store import fts5

#: The most bytes the lists may hold; past it the least recently used go. A posting takes
#: five bytes or so (a 32-bit rowid, an 8-bit count), so this holds about 13 million: the
#: whole index of a few hundred thousand memories, the common words of a million.
MAX_BYTES = 64 * 1024 * 1024
#: Bytes counted for each list beyond its arrays (the arrays' headers, the key, the entry).
LIST_OVERHEAD = 400
#: Rows added at once up to which the lists are extended; more start an empty cache.
EXTEND_MAX = 5_000
#: Characters of new text up to which the lists are extended; more start an empty cache.
#: Extending tokenizes every new row (about 0.4 ms per 1,000 characters here), while a
#: query's own lists read afresh cost a few ms on a small store: 500 long chat turns (500,000
#: characters) took 250 ms to fold in before the next recall, against 10 ms read anew.
EXTEND_MAX_CHARS = 100_000

#: A list's key: the token, and the column it is searched in (``None``: text and tags).
Key = tuple[str, str | None]
_COLUMNS = {None: (0, 1), "tags": (1,)}


@dataclass(frozen=True, slots=True)
class Doclist:
    """The rows holding one token, ascending, and how often each holds it; the largest count
    and the shortest length among them (keywords.Rows.length): what bounds the token's BM25
    contribution to any row."""

    docs: np.ndarray
    tf: np.ndarray
    max_tf: int
    min_length: int

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.tf.nbytes) + LIST_OVERHEAD


def doclist(places: np.ndarray, lengths: np.ndarray) -> Doclist:
    """The list of a token from the rowid of each of its occurrences; ``lengths``: each row's
    length by rowid (every rowid of ``places`` must be in it)."""
    docs, tf = np.unique(places, return_counts=True)
    return _compact(docs, tf, int(lengths[docs].min()) if len(docs) else 0)


def _compact(docs: np.ndarray, tf: np.ndarray, min_length: int) -> Doclist:
    """The smallest integer types that hold ``docs`` and ``tf``."""
    max_tf = int(tf.max()) if len(tf) else 0
    small = not len(docs) or int(docs[-1]) <= np.iinfo(np.int32).max
    return Doclist(
        docs.astype(np.int32 if small else np.int64, copy=False),
        tf.astype(np.min_scalar_type(max_tf), copy=False),
        max_tf,
        min_length,
    )


class DoclistCache:
    """Doclists by :data:`Key`, each covering the index's rows up to :attr:`upto`; least
    recently used first out past ``max_bytes``. Thread-safe; a list once given out is never
    changed (an extension makes a new one)."""

    def __init__(self, upto: int, max_bytes: int | None = None) -> None:
        self.upto = upto
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self._lists: OrderedDict[Key, Doclist] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._lists)

    @property
    def nbytes(self) -> int:
        """The bytes the lists hold, as counted against the bound."""
        return self._bytes

    def get(self, key: Key) -> Doclist | None:
        with self._lock:
            found = self._lists.get(key)
            if found is not None:
                self._lists.move_to_end(key)
            return found

    def put(self, key: Key, found: Doclist, upto: int) -> None:
        """Keep ``found``, read when the index's rows went up to ``upto``, if that is still
        what the cache covers (a list read before an extension would lack its rows)."""
        with self._lock:
            if upto != self.upto or found.nbytes > self.max_bytes:
                return
            old = self._lists.pop(key, None)
            self._bytes += found.nbytes - (old.nbytes if old is not None else 0)
            self._lists[key] = found
            self._evict()

    def extend(self, rows: Sequence[tuple[int, str, str]], lengths: np.ndarray, upto: int) -> None:
        """Append to the lists held the rows ``rows`` (rowid, content, tags) that the index
        gained up to ``upto`` (all of them above :attr:`upto`, ascending); ``lengths``:
        each row's length by rowid."""
        with self._lock:
            if self._lists and rows:
                added = _counts(rows, {token for token, _ in self._lists})
                for key, new in added.items():
                    old = self._lists.get(key)
                    if old is None:  # the token's other column is kept, not this one
                        continue
                    docs = np.array([rowid for rowid, _ in new], dtype=np.int64)
                    tf = np.array([n for _, n in new], dtype=np.int64)
                    shortest = int(lengths[docs].min())
                    shortest = min(old.min_length, shortest) if len(old.docs) else shortest
                    grown = _compact(np.concatenate([old.docs, docs]),
                                     np.concatenate([old.tf, tf]), shortest)  # fmt: skip
                    self._bytes += grown.nbytes - old.nbytes
                    self._lists[key] = grown
                self._evict()  # grown lists count against the bound too
            self.upto = upto

    def _evict(self) -> None:
        """Let the least recently used lists go until the rest fit the bound (lock held)."""
        while self._bytes > self.max_bytes:
            _, gone = self._lists.popitem(last=False)
            self._bytes -= gone.nbytes


def _counts(
    rows: Sequence[tuple[int, str, str]], tokens: set[str]
) -> dict[Key, list[tuple[int, int]]]:
    """For each key of ``tokens``: (rowid, occurrences) of each of ``rows`` holding it."""
    found: dict[Key, list[tuple[int, int]]] = {}
    posts = fts5.postings([(content, tags or "") for _, content, tags in rows])
    for (rowid, _, _), post in zip(rows, posts, strict=True):
        by_token: dict[str, dict[int, int]] = {}
        for (token, col), places in post.places.items():
            if token in tokens:
                by_token.setdefault(token, {})[col] = len(places)
        for token, cols in by_token.items():
            for column, wanted in _COLUMNS.items():
                n = sum(cols.get(c, 0) for c in wanted)
                if n:
                    found.setdefault((token, column), []).append((rowid, n))
    return found
