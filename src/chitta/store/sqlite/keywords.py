"""Keyword search scored with the statistics of the realms searched, not the whole store.

FTS5 still decides what a word is and which memories hold it: the index's own tokenizer
(Porter stems, accents folded) reads each query term, and the index's vocabulary table
(``memories_fts_instance``, schema 6) lists every place each stem occurs. FTS5's ``bm25()`` is
not used: it takes the number of rows, each term's document frequency and the average length
over the whole table, so a realm's ranking moved when another realm's memories came in
(issue 17). Here BM25 (store/bm25.py) takes them from the realms searched:

- N: their live memories;
- df: how many of those hold the term (as a phrase when the tokenizer splits it in parts,
  ``parse_tags``), as FTS5 matches a quoted term;
- tf: how often the term occurs in a memory's text and tags;
- a memory's length: its text's tokens as FTS5 counted them (``memories_fts_docsize``), and
  avgdl their mean over the same memories. Tags add to tf, not to the length.

One realm for the ``kw`` and ``tag`` lanes; every other realm, taken as one collection, for
``xr``. Memories added to, forgotten in or purged from other realms change nothing here.

Each token's doclist is read from the index once and kept (doclists.py). A search that wants
only the best ``k`` scores no more rows than it must (MaxScore, Turtle & Flood 1995): terms
are taken by their largest possible contribution, highest first, and once the k-th best score
among the rows found so far exceeds what the remaining terms could add up to, no other row
can enter the top k; the remaining terms are only looked up for the rows found. The scores are
the exhaustive search's, to the bit (summed in the query's order either way).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from chitta.store import bm25
from chitta.store.fts5 import docsize_columns, stems
from chitta.store.sqlite import doclists
from chitta.store.sqlite.doclists import Doclist, DoclistCache, doclist
from chitta.store.terms import TermStats

Read = Callable[[str, Sequence[object]], list]

_LIVE_ROWS = (
    "SELECT m.rowid, m.realm, d.sz FROM memories m JOIN memories_fts_docsize d "
    "ON d.id = m.rowid WHERE m.deleted_at IS NULL"
)
_NO_ROWS = np.zeros(0, dtype=np.int64)
#: The most df figures :attr:`Rows.known_df` keeps (each a few hundred bytes); past it the
#: figures are counted afresh, so a long quiet spell of varied queries cannot grow it.
KNOWN_DF_MAX = 20_000
#: A bound's relative margin: a row's score is summed in floating point, and rounding could
#: put it a hair above the sum of its terms' bounds.
BOUND_MARGIN = 1e-9


@dataclass(frozen=True, slots=True)
class Rows:
    """The live memories at one moment as the keyword search counts them: each FTS5 row's
    realm (a code, -1 for none) and length by rowid, and each realm's count and total length.
    Never changed once made (searches read it without the store's lock)."""

    realm: np.ndarray  # int32 by rowid
    length: np.ndarray  # int32 by rowid
    codes: Mapping[str, int]
    size: Mapping[int, int]
    tokens: Mapping[int, int]
    #: Each realm's tag tokens: none means a tags-column search there finds nothing, and
    #: need not read the index (a realm nobody tags is the common case).
    tag_tokens: Mapping[int, int]
    #: Each token's doclist, shared by every Rows until a change other than new rows.
    lists: DoclistCache = field(default_factory=lambda: DoclistCache(0), compare=False,
                                repr=False)  # fmt: skip
    #: df found by searches over these rows, by (realm codes, term, column): the gate's
    #: ceiling asks again for the terms the keyword lane has just counted.
    known_df: dict[tuple, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def top(self) -> int:
        """The highest rowid these rows know of."""
        return len(self.realm) - 1


class RowTable:
    """Keeps :class:`Rows` in step with the file, at the start of each search (under the
    store's lock, so no write is half done).

    The realm's word counts (:class:`TermStats`) count every change of a realm's live
    memories; when a realm's count moved by exactly the live rows that are new since the last
    look (rowids above the highest seen), those rows are added; any other change there (a
    forget, a restore, an edit of its text or tags, a purge) reads that realm's rows again. A
    new TermStats (a restored backup) reads everything again.
    """

    def __init__(self) -> None:
        self._rows: Rows | None = None
        self._terms: TermStats | None = None
        self._seen: dict[str, int] = {}
        self._top = 0  # the highest rowid seen in the file, live or not

    def current(self, read: Read, terms: TermStats) -> Rows:
        changes = terms.changes()
        if self._rows is None or terms is not self._terms:
            return self._build(read, terms, changes)
        changed = {r for r in changes.keys() | self._seen.keys()
                   if changes.get(r, 0) != self._seen.get(r, 0)}  # fmt: skip
        if not changed:
            return self._rows
        new = _blocks(read(_LIVE_ROWS + " AND m.rowid > ?", (self._top,)))
        if not set(new) <= changed:  # a live row nobody counted: start again
            return self._build(read, terms, changes)
        reread = {r for r in changed
                  if changes.get(r, 0) - self._seen.get(r, 0)
                  != len(new.get(r, _Block.empty()).rowids)}  # fmt: skip
        for realm in reread:
            new[realm] = _blocks(read(
                "SELECT m.rowid, m.realm, d.sz FROM memories m JOIN memories_fts_docsize d ON "
                "d.id = m.rowid WHERE m.realm = ? AND m.deleted_at IS NULL", (realm,)
            )).get(realm, _Block.empty())  # fmt: skip
        before, lists = self._top, self._rows.lists
        top = self._max_rowid(read)
        added = sum(len(block.rowids) for block in new.values())
        texts: list = []
        if lists and not reread and added <= doclists.EXTEND_MAX and lists.upto != top:
            texts = read("SELECT rowid, content, tags FROM memories WHERE rowid > ? AND "
                         "rowid <= ? AND deleted_at IS NULL ORDER BY rowid",
                         (before, top))  # fmt: skip
        long = sum(len(content) + len(tags or "") for _, content, tags in texts)
        if reread or (lists and (added > doclists.EXTEND_MAX or long > doclists.EXTEND_MAX_CHARS)):
            # Rows changed in place, or so much was added that reading the query's lists
            # anew costs less than tokenizing it all: start an empty cache.
            lists, texts = DoclistCache(top, lists.max_bytes), []
        self._rows = _updated(self._rows, new, reread, top, lists)
        if lists.upto != top:
            lists.extend(texts, self._rows.length, top)
        self._seen = changes
        return self._rows

    @property
    def built(self) -> bool:
        """Whether the rows were read (or adopted) yet."""
        return self._rows is not None

    def adopt(self, read: Read, terms: TermStats, rows: Rows, top: int) -> Rows:
        """Take ``rows`` as saved when the file's rowids went up to ``top``, every change
        since a memory stored after it (the caller checked); those are added from the file."""
        new = _blocks(read(_LIVE_ROWS + " AND m.rowid > ?", (top,)))
        self._top = top
        now = self._max_rowid(read)
        self._rows = _updated(rows, new, set(), now, DoclistCache(now))
        self._terms, self._seen = terms, terms.changes()
        return self._rows

    def saved(self, read: Read, terms: TermStats) -> tuple[Rows, int] | None:
        """The rows brought up to date and the highest rowid they know of, for a saved file;
        None when they were never built (nothing to save)."""
        if self._rows is None:
            return None
        return self.current(read, terms), self._top

    def _build(self, read: Read, terms: TermStats, changes: dict[str, int]) -> Rows:
        new = _blocks(read(_LIVE_ROWS, ()))
        empty = Rows(np.full(0, -1, np.int32), np.zeros(0, np.int32), {}, {}, {}, {})
        self._top = 0  # a restored backup may number its rows lower
        top = self._max_rowid(read)
        bound = self._rows.lists.max_bytes if self._rows is not None else None
        self._rows = _updated(empty, new, set(new), top, DoclistCache(top, bound))
        self._terms, self._seen = terms, changes
        return self._rows

    def _max_rowid(self, read: Read) -> int:
        self._top = max(self._top, read("SELECT max(rowid) FROM memories", ())[0][0] or 0)
        return self._top


@dataclass(frozen=True, slots=True)
class _Block:
    """Live rows of one realm: their rowids, content tokens and tag tokens."""

    rowids: np.ndarray
    content: np.ndarray
    tags: np.ndarray

    @classmethod
    def empty(cls) -> _Block:
        return cls(_NO_ROWS, _NO_ROWS, _NO_ROWS)


def _blocks(found: Sequence[tuple[int, str, bytes]]) -> dict[str, _Block]:
    """(rowid, realm, FTS5 docsize record) rows, by realm."""
    if not found:
        return {}
    rowids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
    content, tags = docsize_columns([r[2] for r in found])
    names: dict[str, int] = {}
    codes = np.fromiter((names.setdefault(r[1], len(names)) for r in found), dtype=np.int32,
                        count=len(found))  # fmt: skip
    if len(names) == 1:
        return {next(iter(names)): _Block(rowids, content, tags)}
    out = {}
    for name, code in names.items():
        mine = codes == code
        out[name] = _Block(rowids[mine], content[mine], tags[mine])
    return out


def _updated(
    rows: Rows,
    new: Mapping[str, _Block],
    whole: Collection[str],
    top: int,
    lists: DoclistCache,
) -> Rows:
    """``rows`` with the rows of ``new`` added; for the realms in ``whole``, ``new`` holds all
    their live rows (perhaps none) and replaces what ``rows`` had of them. ``lists``: the
    doclists the new Rows shares."""
    size = max(top + 1, len(rows.realm))
    realm = np.full(size, -1, np.int32)
    realm[: len(rows.realm)] = rows.realm
    length = np.zeros(size, np.int32)
    length[: len(rows.length)] = rows.length
    codes, count, tokens = dict(rows.codes), dict(rows.size), dict(rows.tokens)
    tag_tokens = dict(rows.tag_tokens)
    for name, block in new.items():
        code = codes.setdefault(name, len(codes))
        if name in whole:
            realm[realm == code] = -1
            count[code] = tokens[code] = tag_tokens[code] = 0
        realm[block.rowids], length[block.rowids] = code, block.content
        count[code] = count.get(code, 0) + len(block.rowids)
        tokens[code] = tokens.get(code, 0) + int(block.content.sum())
        tag_tokens[code] = tag_tokens.get(code, 0) + int(block.tags.sum())
    return Rows(realm, length, codes, count, tokens, tag_tokens, lists)


@dataclass(frozen=True, slots=True)
class Ranked:
    """The memories of the realms searched that hold a term, best first (rowids and their
    scores; equal scores by rowid), and the statistics they were scored with.

    All of them from an exhaustive search; from a search for the best ``k``, those it had to
    look at, of which the first :attr:`exact` are in their final places (no memory left out
    scores as much as any of them) and hold at least the best ``k``."""

    rowids: np.ndarray
    scores: np.ndarray
    size: int  # N
    df: Mapping[str, int]
    exact: int
    #: Whether every memory holding a term is here.
    whole: bool


@dataclass(frozen=True, slots=True)
class _Term:
    """One query term: its doclist (every realm, forgotten rows too: a memory already known
    to be one of the realms' live ones is looked up there), how many live memories of the
    realms searched hold it, its idf, and the most it can add to a memory's score."""

    docs: np.ndarray
    tf: np.ndarray
    df: int
    idf: float
    ceiling: float


def search(
    read: Read,
    rows: Rows,
    terms: Sequence[str],
    realms: Collection[str],
    column: str | None = None,
    k: int | None = None,
) -> Ranked:
    """BM25 of the memories of ``realms`` holding one of ``terms`` (in ``column`` only, when
    given), with those realms' statistics; every one of them, or (``k``) at least the best
    ``k`` in their places. See the module's docstring."""
    codes = sorted(rows.codes[r] for r in realms if r in rows.codes)
    n = sum(rows.size.get(c, 0) for c in codes)
    total = sum(rows.tokens.get(c, 0) for c in codes)
    avgdl = total / n if n else 0.0
    if column == "tags" and not any(rows.tag_tokens.get(c, 0) for c in codes):
        df = {term: 0 for term in dict.fromkeys(terms)}
        for term in df:
            _known(rows, (tuple(codes), term, column), 0)
        return Ranked(_NO_ROWS, np.zeros(0), n, df, 0, True)
    scored: list[_Term] = []
    for term in dict.fromkeys(terms):
        found = _doclist(read, rows, stems(term), column)
        count = _df(rows, codes, term, column, lambda found=found: found)
        idf = bm25.idf(count, n)
        ceiling = idf * bm25.saturation(found.max_tf, found.min_length, avgdl)
        scored.append(_Term(found.docs, found.tf, count, idf, ceiling))
    df = {term: t.df for term, t in zip(dict.fromkeys(terms), scored, strict=True)}
    scored = [t for t in scored if t.df]
    if not scored:
        return Ranked(_NO_ROWS, np.zeros(0), n, df, 0, True)
    if k is None:
        rowids = np.unique(np.concatenate([_mine(rows, codes, t.docs) for t in scored]))
        scores, bound = _scores(scored, rowids, rows.length, avgdl), -1.0
    else:
        rowids, scores, bound = _best(scored, rows, codes, avgdl, k)
    order = np.lexsort((rowids, -scores))
    rowids, scores = rowids[order], scores[order]
    return Ranked(rowids, scores, n, df, int(np.count_nonzero(scores > bound)), bound < 0)


def _best(
    terms: Sequence[_Term], rows: Rows, codes: Sequence[int], avgdl: float, k: int
) -> tuple[np.ndarray, np.ndarray, float]:
    """MaxScore: the holders of the terms with the highest ceilings, taken one term at a
    time until no memory holding only the remaining terms could score as much as the k-th
    best found; their scores; and what a memory not among them scores at most (-1: none
    is left out)."""
    order = sorted(range(len(terms)), key=lambda i: -terms[i].ceiling)
    found, scores = [], []
    best = np.zeros(0)
    for step, i in enumerate(order):
        # A holder of a term taken before was found then; the rest hold none of those terms.
        taken = set(order[:step])
        new = _mine(rows, codes, terms[i].docs)
        for j in taken:
            new = new[~_held(terms[j].docs, new)]
        later = [t for j, t in enumerate(terms) if j not in taken]
        found.append(new)
        scores.append(_scores(later, new, rows.length, avgdl))
        if step + 1 == len(order):
            break
        bound = sum(terms[j].ceiling for j in order[step + 1 :]) * (1 + BOUND_MARGIN)
        best = np.concatenate([best, scores[-1]])
        if len(best) >= k and np.partition(best, -k)[-k] > bound:
            return np.concatenate(found), np.concatenate(scores), bound
    return np.concatenate(found), np.concatenate(scores), -1.0


def _mine(rows: Rows, codes: Sequence[int], docs: np.ndarray) -> np.ndarray:
    """Those of ``docs`` (ascending) that are live memories of realms ``codes`` in ``rows``
    (a list may hold rows newer than these)."""
    docs = docs[: np.searchsorted(docs, len(rows.realm))]
    realms = rows.realm[docs]
    # One realm (every lane but xr): a comparison, not isin's set-up.
    return docs[realms == codes[0] if len(codes) == 1 else np.isin(realms, codes)]


def _held(docs: np.ndarray, rowids: np.ndarray) -> np.ndarray:
    """Which of ``rowids`` are in ``docs`` (ascending)."""
    return _lookup(docs, rowids)[0]


def _lookup(docs: np.ndarray, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``rowids`` are in ``docs`` (ascending), and where each would be."""
    if not len(docs):
        return np.zeros(len(rowids), dtype=bool), np.zeros(len(rowids), dtype=np.int64)
    at = np.minimum(np.searchsorted(docs, rowids), len(docs) - 1)
    return docs[at] == rowids, at


def _scores(
    terms: Sequence[_Term], rowids: np.ndarray, length: np.ndarray, avgdl: float
) -> np.ndarray:
    """Each of ``rowids``' BM25 over ``terms``, summed in the terms' order (so a memory's
    score is the same float however it was found)."""
    scores = np.zeros(len(rowids))
    if not len(rowids):
        return scores
    for term in terms:
        held, at = _lookup(term.docs, rowids)
        tf, mine = term.tf[at[held]], rowids[held]
        scores[held] += term.idf * bm25.saturation(tf, length[mine], avgdl)
    return scores


def frequencies(
    read: Read, rows: Rows, terms: Sequence[str], realms: Collection[str]
) -> tuple[int, dict[str, int]]:
    """N and each term's df over ``realms``, as :func:`search` counts them."""
    codes = sorted(rows.codes[r] for r in realms if r in rows.codes)
    df = {}
    for term in dict.fromkeys(terms):
        df[term] = _df(rows, codes, term, None,
                       lambda term=term: _doclist(read, rows, stems(term), None))  # fmt: skip
    return sum(rows.size.get(c, 0) for c in codes), df


def _df(
    rows: Rows, codes: Sequence[int], term: str, column: str | None, found: Callable[[], Doclist]
) -> int:
    """How many live memories of realms ``codes`` hold ``term`` (its doclist ``found()``):
    counted once per rows."""
    key = (tuple(codes), term, column)
    known = rows.known_df.get(key)
    return known if known is not None else _known(rows, key, len(_mine(rows, codes, found().docs)))


def holds(read: Read, rows: Rows, term: str, rowids: np.ndarray) -> np.ndarray | None:
    """Which of ``rowids`` (none above the rows' top) hold ``term`` in their text or tags, as
    a search for it matches them, from its doclist; None when the tokenizer makes a phrase
    of it (its places are in no list)."""
    tokens = stems(term)
    if len(tokens) > 1:
        return None
    if not tokens:
        return np.zeros(len(rowids), dtype=bool)
    return _held(_doclist(read, rows, tokens, None).docs, rowids)


def preload(read: Read, rows: Rows, words: Sequence[str], stop: Callable[[], bool]) -> int:
    """Read the doclists of ``words`` (the commonest first: the costliest to read during a
    search) into the rows' cache until it is three-quarters full or ``stop()``; how many
    were read."""
    read_now = 0
    for word in words:
        if stop() or rows.lists.nbytes >= rows.lists.max_bytes * 3 // 4:
            break
        tokens = stems(word)
        if len(tokens) == 1 and rows.lists.get((tokens[0], None)) is None:
            _doclist(read, rows, tokens, None)
            read_now += 1
    return read_now


def _known(rows: Rows, key: tuple, df: int) -> int:
    """Keep ``df`` as the figure of ``key`` (emptying the store of them first when full)."""
    if len(rows.known_df) >= KNOWN_DF_MAX:
        rows.known_df.clear()
    rows.known_df[key] = df
    return df


def _doclist(read: Read, rows: Rows, tokens: tuple[str, ...], column: str | None) -> Doclist:
    """The doclist of the phrase ``tokens``, at least up to the rows' top: kept, or read
    from the index (and kept when it is one token and the lists still end where the rows
    do; rows added since are counted by the next row table's extension)."""
    key = (tokens[0], column) if len(tokens) == 1 else None
    found = rows.lists.get(key) if key is not None else None
    if found is None:
        places = _occurrences(read, tokens, column)
        found = doclist(places[places <= rows.top], rows.length)
        if key is not None:
            rows.lists.put(key, found, rows.top)
    return found


def _occurrences(read: Read, tokens: tuple[str, ...], column: str | None) -> np.ndarray:
    """The rowid of each occurrence of the phrase ``tokens`` in the index (all realms, live
    or not), once per occurrence."""
    if not tokens:
        return _NO_ROWS
    where, params = "term = ?", [tokens[0]]
    if column is not None:
        where, params = where + " AND col = ?", [*params, column]
    if len(tokens) == 1:
        # One string of rowids: reading a common word's thousands of rows one by one would
        # cost more than the scoring.
        text = read(f"SELECT group_concat(doc) FROM memories_fts_instance WHERE {where}", params)
        return np.fromstring(text[0][0], dtype=np.int64, sep=",") if text[0][0] else _NO_ROWS
    # A phrase: the places of each token, moved back by its position in the phrase; a place
    # that all of them share starts an occurrence.
    starts: set[tuple[int, str, int]] | None = None
    for i, token in enumerate(tokens):
        params[0] = token
        sql = f"SELECT doc, col, offset FROM memories_fts_instance WHERE {where}"
        found = {(doc, col, offset - i) for doc, col, offset in read(sql, params)}
        starts = found if starts is None else starts & found
        if not starts:
            return _NO_ROWS
    return np.array(sorted(doc for doc, _, _ in starts or ()), dtype=np.int64)
