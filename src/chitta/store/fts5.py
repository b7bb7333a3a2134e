"""What a word is, for both backends, as SQLite's FTS5 reads it (``porter unicode61
remove_diacritics 2``): the tokens of query terms, and the keyword postings of memories that
the PostgreSQL backend stores, asked of FTS5 itself, so that both backends match and count
words exactly as the SQLite backend's index does.

An in-memory SQLite database with an FTS5 table of two columns (content, tags) and its
``fts5vocab`` instance table: a batch of texts goes in, every (row, column, token, offset)
comes out. The standard library's sqlite3 is all it needs.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: The SQLite keyword index's tokenizer (store/sqlite/migrations.py, schema 1): query terms
#: and the PostgreSQL backend's postings go through it.
TOKENIZE = "porter unicode61 remove_diacritics 2"
#: The columns as ``kw_postings.col`` numbers them (FTS5's order).
COLUMNS = {"content": 0, "tags": 1}


@dataclass(frozen=True, slots=True)
class Postings:
    """One memory's keyword postings: positions of each (token, column), and its length (the
    content's tokens, as FTS5's docsize counts them)."""

    places: dict[tuple[str, int], list[int]]
    length: int


class _Tokenizer:
    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._conn.execute(
            f"CREATE VIRTUAL TABLE probe USING fts5 (content, tags, tokenize = '{TOKENIZE}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE probe_words USING fts5vocab (probe, instance)")
        self._lock = threading.Lock()

    def postings(self, texts: Sequence[tuple[str, str]]) -> list[Postings]:
        """The postings of each (content, tags)."""
        out = [Postings({}, 0) for _ in texts]
        lengths = [0] * len(texts)
        with self._lock:
            self._conn.executemany(
                "INSERT INTO probe (rowid, content, tags) VALUES (?, ?, ?)",
                [(i + 1, c, t) for i, (c, t) in enumerate(texts)],
            )
            try:
                rows = self._conn.execute(
                    "SELECT doc, col, term, offset FROM probe_words ORDER BY doc, col, offset"
                ).fetchall()
                sizes = self._conn.execute("SELECT id, sz FROM probe_docsize").fetchall()
            finally:
                self._conn.execute("DELETE FROM probe")
        for doc, col, term, offset in rows:
            out[doc - 1].places.setdefault((term, COLUMNS[col]), []).append(offset)
        for doc, sz in sizes:
            lengths[doc - 1] = content_length(sz)
        return [Postings(p.places, n) for p, n in zip(out, lengths, strict=True)]

    def tokens(self, text: str) -> tuple[str, ...]:
        with self._lock:
            self._conn.execute("INSERT INTO probe (rowid, content) VALUES (1, ?)", (text,))
            try:
                rows = self._conn.execute("SELECT term FROM probe_words ORDER BY offset").fetchall()
            finally:
                self._conn.execute("DELETE FROM probe")
        return tuple(r[0] for r in rows)


def content_length(sz: bytes) -> int:
    """The first number of an FTS5 ``docsize`` record, the row's content tokens."""
    return column_lengths(sz)[0]


def column_lengths(sz: bytes) -> tuple[int, ...]:
    """The numbers of an FTS5 ``docsize`` record, one per column (content, then tags): each a
    SQLite varint (7 bits a byte, high bit set on all but the last; a ninth byte gives 8)."""
    values: list[int] = []
    value = used = 0
    for byte in sz:
        used += 1
        if used == 9:
            values.append((value << 8) | byte)
            value = used = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            values.append(value)
            value = used = 0
    return tuple(values)


#: From this many records on :func:`docsize_columns` decodes them together (measured: the
#: same time at 64, numpy's set-up ~40 µs costs more below; the keyword rows added after a
#: daemon's write are one or a few).
BULK_DOCSIZES = 64


def docsize_columns(records: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`column_lengths` of many ``docsize`` records at once: each one's content and
    tag tokens (0 where a record has no second number), decoded together in numpy (at a
    million rows, a third of the time a record at a time took)."""
    n = len(records)
    if n < BULK_DOCSIZES:
        return _one_by_one(records)
    sizes = np.fromiter(map(len, records), dtype=np.int64, count=n)
    if not sizes.all() or sizes.max() > 16:
        return _one_by_one(records)
    data = np.frombuffer(b"".join(records), dtype=np.uint8)
    last = data < 0x80  # a number's last byte
    which = np.cumsum(last) - last  # the number each byte belongs to
    count = int(last.sum())
    width = np.bincount(which, minlength=count)
    if width.max() > 8:  # a nine-byte number: its last byte is all value (never a length)
        return _one_by_one(records)
    first = np.cumsum(width) - width
    place = np.arange(len(data)) - first[which]
    shift = 7 * (width[which] - 1 - place)
    values = np.zeros(count, dtype=np.int64)
    np.add.at(values, which, (data & 0x7F).astype(np.int64) << shift)
    # Each record's numbers: a record ends on a number's last byte.
    starts = np.cumsum(sizes) - sizes
    numbers = np.add.reduceat(last.astype(np.int64), starts)
    before = np.cumsum(numbers) - numbers
    tags = np.where(numbers > 1, values[np.minimum(before + 1, count - 1)], 0)
    return values[before], tags


def _one_by_one(records: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    pairs = [(*column_lengths(sz), 0, 0)[:2] for sz in records]
    content = np.array([c for c, _ in pairs], dtype=np.int64)
    return content, np.array([t for _, t in pairs], dtype=np.int64)


@functools.cache
def _tokenizer() -> _Tokenizer:
    return _Tokenizer()


def postings(texts: Sequence[tuple[str, str]]) -> list[Postings]:
    """The keyword postings of each (content, tags)."""
    return _tokenizer().postings(texts) if texts else []


@functools.lru_cache(maxsize=8192)
def stems(term: str) -> tuple[str, ...]:
    """FTS5's tokens of a query term: ``"deploying"`` → ``("deploi",)``, ``"parse_tags"`` →
    ``("pars", "tag")`` (a phrase), ``"_"`` → ``()``."""
    return _tokenizer().tokens(term)


def matches(terms: Sequence[str], texts: Mapping[str, tuple[str, str]]) -> dict[str, set[str]]:
    """Which of ``terms`` each text (id → (content, tags)) holds, as an FTS5 phrase query for
    the term matches it: the term's tokens at consecutive places of one column. The work is
    the texts' own tokens, not the index's posting lists, so it does not grow with the
    store (issue 24: at 100,000 memories reading the lists took 5 ms of every recall)."""
    if not terms or not texts:
        return {}
    ids = list(texts)
    posts = postings([texts[i] for i in ids])
    matched: dict[str, set[str]] = {}
    for term in dict.fromkeys(terms):
        tokens = stems(term)
        if not tokens:
            continue
        for memory_id, post in zip(ids, posts, strict=True):
            if _holds(post, tokens):
                matched.setdefault(memory_id, set()).add(term)
    return matched


def _holds(post: Postings, tokens: tuple[str, ...]) -> bool:
    for col in COLUMNS.values():
        starts = set(post.places.get((tokens[0], col), ()))
        for i, token in enumerate(tokens[1:], start=1):
            if not starts:
                break
            starts &= {at - i for at in post.places.get((token, col), ())}
        if starts:
            return True
    return False
