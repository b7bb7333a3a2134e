"""Symbol search: embedding similarity over a symbol's name, signature and docstring, and
BM25 over its name and signature, fused by reciprocal rank (recall/fusion.py).

Words of code: an identifier is split at ``_``, ``.``, ``::`` and case changes
(``parseHTTPRequest`` → parse, HTTP, Request), then each word goes through the keyword
index's own tokenizer (store/fts5.py: Porter stems, diacritics removed), so ``parsing``
finds ``parse_tags``. BM25 (Robertson & Zaragoza 2009) with FTS5's constants and idf
(store/bm25.py), over one realm's symbols.

The index of a realm (its symbols' words and vectors) is built in this process from the
code tables and kept while :meth:`CodeTables.search_version` says nothing changed: a search
then costs a matrix product and a few posting lists.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from chitta.recall.fusion import rrf
from chitta.store import bm25, fts5
from chitta.store.code import CodeTables, StoredSymbol

#: Each lane's candidates before fusion: this many times the limit, at least MIN_DEPTH.
DEPTH_FACTOR = 4
MIN_DEPTH = 40
#: The most characters of a symbol's text the embedder is given: its head and the first
#: paragraph of its docstring, where what it does is said. Indexing time grows with it (on
#: MiniLM, 2 busy cores: 34 symbols/s at the head alone, 25 at 300 characters, 10 at 1,000).
EMBED_CHARS = 320
#: Symbols embedded per call of the embedder.
EMBED_BATCH = 64
#: Cached realm indexes per code tables (the realms searched last).
CACHED_REALMS = 4

_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^0-9A-Za-z\u00c0-\uffff]+")


def words(text: str) -> list[str]:
    """An identifier's or a query's words: split at punctuation and case changes."""
    return [w for part in _SPLIT.split(text) for w in _CASE.split(part) if w]


def tokens(text: str) -> list[str]:
    """BM25's tokens of ``text``: its words, each as FTS5's tokenizer stems it."""
    return [t for w in words(text) for t in fts5.stems(w)]


def keyword_text(s: StoredSymbol) -> str:
    """What BM25 reads of a symbol: its name and signature."""
    return f"{s.symbol.name} {s.symbol.signature}"


def embed_text(s: StoredSymbol) -> str:
    """What the embedder reads of a symbol: its name (qualified, its words spelled out),
    signature and docstring."""
    x = s.symbol
    head = f"{x.qualified} ({' '.join(words(x.name)).lower()}): {x.signature}"
    first = x.doc.strip().split("\n\n", 1)[0]
    return f"{head}\n{first}"[:EMBED_CHARS] if first else head[:EMBED_CHARS]


@dataclass(frozen=True, slots=True)
class Hit:
    """One symbol found, with its fused score and its rank in each lane that found it."""

    symbol: StoredSymbol
    score: float
    lanes: dict[str, int]


class RealmIndex:
    """One realm's symbols for search: BM25 postings over name and signature, and the
    vectors by one model."""

    def __init__(self, symbols: Sequence[StoredSymbol], ids: Sequence[str],
                 matrix: np.ndarray) -> None:  # fmt: skip
        self.symbols = list(symbols)
        self.kinds = np.array([s.symbol.kind for s in self.symbols], dtype=object)
        texts = fts5.postings([(" ".join(words(keyword_text(s))), "") for s in self.symbols])
        self.lengths = np.array([p.length for p in texts], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if len(self.lengths) else 0.0
        postings: dict[str, dict[int, int]] = {}
        for row, p in enumerate(texts):
            for (token, _col), places in p.places.items():
                postings.setdefault(token, {})[row] = len(places)
        self.postings = {t: (np.fromiter(d.keys(), np.int64), np.fromiter(d.values(), np.float64))
                         for t, d in postings.items()}  # fmt: skip
        row_of = {s.id: i for i, s in enumerate(self.symbols)}
        keep = [(row_of[i], j) for j, i in enumerate(ids) if i in row_of]
        self.vector_rows = np.array([r for r, _ in keep], dtype=np.int64)
        self.matrix = (matrix[[j for _, j in keep]] if keep
                       else np.zeros((0, matrix.shape[1] if matrix.ndim == 2 else 0),
                                     dtype=np.float32))  # fmt: skip

    def keyword(self, query: str, mask: np.ndarray | None, k: int) -> list[tuple[int, float]]:
        """The ``k`` best rows by BM25 of the query's tokens (rows outside ``mask`` left out)."""
        n = len(self.symbols)
        scores = np.zeros(n, dtype=np.float64)
        for token in dict.fromkeys(tokens(query)):
            found = self.postings.get(token)
            if found is None:
                continue
            rows, tf = found
            weight = bm25.idf(len(rows), n)
            scores[rows] += weight * bm25.saturation(tf, self.lengths[rows], self.avgdl)
        if mask is not None:
            scores[~mask] = 0.0
        return _top(scores, k)

    def semantic(self, vector: np.ndarray, mask: np.ndarray | None,
                 k: int) -> list[tuple[int, float]]:  # fmt: skip
        """The ``k`` rows nearest ``vector`` by cosine (among rows with a vector)."""
        if not len(self.vector_rows):
            return []
        rows = self.vector_rows
        sims = self.matrix @ vector.astype(np.float32)
        if mask is not None:
            keep = mask[rows]
            rows, sims = rows[keep], sims[keep]
        if not len(rows):
            return []
        top = np.argsort(-sims, kind="stable")[:k]
        return [(int(rows[i]), float(sims[i])) for i in top]


def _top(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    hit = np.flatnonzero(scores > 0)
    order = hit[np.argsort(-scores[hit], kind="stable")][:k]
    return [(int(i), float(scores[i])) for i in order]


_lock = threading.Lock()
_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def realm_index(code: CodeTables, realm: str, model: str) -> RealmIndex:
    """``realm``'s search index, from the cache while the tables say it is current."""
    version = code.search_version(realm)
    key = (realm, model)
    with _lock:
        per_tables = _cache.setdefault(code, {})
        held = per_tables.get(key)
        if held is not None and held[0] == version:
            return held[1]
    ids, matrix = code.vectors(realm, model)
    index = RealmIndex(code.realm_symbols(realm), ids, matrix)
    with _lock:
        per_tables = _cache.setdefault(code, {})
        per_tables.pop(key, None)
        per_tables[key] = (version, index)
        while len(per_tables) > CACHED_REALMS:
            per_tables.pop(next(iter(per_tables)))
    return index


def search(
    code: CodeTables,
    realm: str,
    query: str,
    *,
    model: str,
    embed_query: Callable[[str], np.ndarray] | None,
    kinds: Sequence[str] = (),
    limit: int = 10,
) -> tuple[list[Hit], RealmIndex]:
    """The symbols of ``realm`` best matching ``query``: the BM25 lane (``kw``) and, with
    ``embed_query``, the embedding lane (``sem``), fused by RRF; at most ``limit``."""
    index = realm_index(code, realm, model)
    mask = np.isin(index.kinds, list(kinds)) if kinds else None
    depth = max(MIN_DEPTH, DEPTH_FACTOR * limit)
    rankings = {"kw": index.keyword(query, mask, depth)}
    if embed_query is not None and len(index.vector_rows):
        rankings["sem"] = index.semantic(embed_query(query), mask, depth)
    fused = rrf({lane: [(str(r), s) for r, s in ranked] for lane, ranked in rankings.items()})
    hits = [Hit(index.symbols[int(f.id)], f.score, {lane: h.rank for lane, h in f.lanes.items()})
            for f in fused[:limit]]  # fmt: skip
    return hits, index


def like_lengths(texts: Sequence[str], size: int = EMBED_BATCH) -> list[list[int]]:
    """The positions of ``texts`` in slices of ``size``, shortest texts first.

    The embedder pads each batch to its longest text, so a slice mixing one-line signatures
    with long docstrings makes every text in it cost the longest (measured on 1,000 symbols
    of huggingface_hub: 1.15x the symbols/s of slices in file order at load 1.5-2.4, more
    under heavier load)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[at : at + size] for at in range(0, len(order), size)]


def embed_symbols(
    code: CodeTables,
    model: str,
    embed: Callable[[list[str]], np.ndarray],
    symbols: Sequence[StoredSymbol],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed ``symbols`` (their name, signature and docstring) in batches and store their
    vectors under ``model``; how many."""
    texts = [embed_text(s) for s in symbols]
    done = 0
    for batch in like_lengths(texts):
        vectors = embed([texts[i] for i in batch])
        done += code.set_vectors(model, [(symbols[i], v) for i, v in
                                         zip(batch, vectors, strict=True)])  # fmt: skip
        if progress is not None:
            progress(done, len(symbols))
    return done
