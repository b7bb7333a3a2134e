"""Keyword search on PostgreSQL: the SQLite backend's BM25, float for float.

The same tokens (FTS5's own tokenizer at write time, store/fts5.py), the same statistics
(N and the mean length over the live memories of the realms searched, from ``kw_realms``; a
term's df over the same memories), the same formula (store/bm25.py) summed term by term in
the query's order, and the same order of equal scores (insertion order, SQLite's rowid, here
``memories.seq``): for the same content both backends return the same ids with the same
scores. The holders of each term are read from ``kw_postings``; the scoring runs here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from chitta.store import bm25
from chitta.store.fts5 import COLUMNS, stems

Read = Callable[[str, Sequence[object]], list]


@dataclass(frozen=True, slots=True)
class Realms:
    """Which realms a search takes as its collection: ``realm = ANY(names)``, or every realm
    but ``names[0]`` (``other``)."""

    names: tuple[str, ...]
    other: bool = False

    def sql(self, column: str) -> tuple[str, list]:
        if self.other:
            return f"{column} <> %s", [self.names[0]]
        return f"{column} = ANY(%s)", [list(self.names)]


@dataclass(frozen=True, slots=True)
class Keep:
    """The condition (over ``memories m`` and ``join``) a hit must meet to be returned; its
    collection's statistics count every live memory regardless."""

    where: str = "true"
    params: tuple = ()
    join: str = ""


@dataclass(frozen=True, slots=True)
class _Holders:
    seq: np.ndarray  # insertion order of each live memory holding the term
    ids: list[str]
    tf: np.ndarray
    length: np.ndarray
    keep: np.ndarray  # bool: meets the Keep condition


def statistics(read: Read, realms: Realms) -> tuple[int, int]:
    """N and the total content length of the collection's live memories."""
    where, params = realms.sql("realm")
    n, tokens = read(
        f"SELECT coalesce(sum(live), 0), coalesce(sum(tokens), 0) FROM kw_realms WHERE {where}",
        params,
    )[0]
    return int(n), int(tokens)


def search(
    read: Read,
    terms: Sequence[str],
    realms: Realms,
    keep: Keep,
    limit: int,
    column: str | None = None,
) -> list[tuple[str, float]]:
    """The ``limit`` best kept memories holding any of ``terms``: (id, BM25), best first,
    equal scores oldest first."""
    n, total = statistics(read, realms)
    avgdl = total / n if n else 0.0
    seqs: list[np.ndarray] = []
    parts: list[np.ndarray] = []
    ids: dict[int, str] = {}
    for term in dict.fromkeys(terms):
        h = _holders(read, term, realms, keep, column)
        if not len(h.seq):
            continue
        part = bm25.idf(len(h.seq), n) * bm25.saturation(h.tf, h.length, avgdl)
        seqs.append(h.seq[h.keep])
        parts.append(np.asarray(part)[h.keep])
        kept = [i for i, k in zip(h.ids, h.keep.tolist(), strict=True) if k]
        ids.update(zip(h.seq[h.keep].tolist(), kept, strict=True))
    if not seqs or limit <= 0:
        return []
    found, where = np.unique(np.concatenate(seqs), return_inverse=True)
    scores = np.bincount(where, weights=np.concatenate(parts), minlength=len(found))
    order = np.lexsort((found, -scores))[:limit]
    return [(ids[int(found[i])], float(scores[i])) for i in order]


def frequencies(read: Read, terms: Sequence[str], realms: Realms) -> tuple[int, dict[str, int]]:
    """N and each term's df over the collection, as :func:`search` counts them."""
    n, _ = statistics(read, realms)
    return n, {t: len(_holders(read, t, realms, Keep(), None).seq) for t in dict.fromkeys(terms)}


def _holders(read: Read, term: str, realms: Realms, keep: Keep, column: str | None) -> _Holders:
    tokens = stems(term)
    empty = np.zeros(0, dtype=np.int64)
    if not tokens:
        return _Holders(empty, [], empty, empty.astype(np.int32), empty.astype(bool))
    realm_sql, realm_params = realms.sql("p.realm")
    col_sql, col_params = ("", []) if column is None else (" AND p.col = %s", [COLUMNS[column]])
    if len(tokens) == 1:
        rows = read(
            f"SELECT m.seq, m.id, sum(cardinality(p.positions)), m.kw_length, bool_or({keep.where})"
            f" FROM kw_postings p JOIN memories m ON m.id = p.memory_id {keep.join} "
            f"WHERE p.term = %s AND {realm_sql}{col_sql} AND m.deleted_at IS NULL "
            "GROUP BY m.seq, m.id, m.kw_length ORDER BY m.seq",
            (*keep.params, tokens[0], *realm_params, *col_params),
        )
    else:
        rows = _phrase_holders(read, tokens, realm_sql, realm_params, col_sql, col_params, keep)
    return _Holders(
        np.array([r[0] for r in rows], dtype=np.int64),
        [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=np.int32),
        np.array([bool(r[4]) for r in rows], dtype=bool),
    )


def _phrase_holders(
    read: Read,
    tokens: tuple[str, ...],
    realm_sql: str,
    realm_params: list,
    col_sql: str,
    col_params: list,
    keep: Keep,
) -> list[tuple]:
    """(seq, id, tf, length, kept) of the live memories holding the phrase ``tokens``: a
    place that every token holds, each moved back by its position in the phrase, starts an
    occurrence (FTS5's phrase match, within one column)."""
    starts: set[tuple[str, int, int]] | None = None
    for i, token in enumerate(tokens):
        rows = read(
            "SELECT p.memory_id, p.col, p.positions FROM kw_postings p JOIN memories m ON "
            f"m.id = p.memory_id WHERE p.term = %s AND {realm_sql}{col_sql} AND "
            "m.deleted_at IS NULL",
            (token, *realm_params, *col_params),
        )
        found = {(mid, col, pos - i) for mid, col, places in rows for pos in places}
        starts = found if starts is None else starts & found
        if not starts:
            return []
    tf: dict[str, int] = {}
    for mid, _, _ in starts or ():
        tf[mid] = tf.get(mid, 0) + 1
    rows = read(
        f"SELECT m.seq, m.id, m.kw_length, ({keep.where}) FROM memories m {keep.join} "
        "WHERE m.id = ANY(%s) ORDER BY m.seq",
        (*keep.params, list(tf)),
    )
    return [(seq, mid, tf[mid], length, kept) for seq, mid, length, kept in rows]


def matches(read: Read, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
    """Which of ``terms`` each of ``ids`` holds (live or not, as FTS5 holds them)."""
    matched: dict[str, set[str]] = {}
    for term in dict.fromkeys(terms):
        tokens = stems(term)
        if not tokens:
            continue
        starts: set[tuple[str, int, int]] | None = None
        for i, token in enumerate(tokens):
            rows = read(
                "SELECT memory_id, col, positions FROM kw_postings WHERE term = %s AND "
                "memory_id = ANY(%s)",
                (token, list(ids)),
            )
            found = {(mid, col, pos - i) for mid, col, places in rows for pos in places}
            starts = found if starts is None else starts & found
        for mid, _, _ in starts or ():
            matched.setdefault(mid, set()).add(term)
    return matched
