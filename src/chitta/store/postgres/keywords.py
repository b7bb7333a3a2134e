"""Keyword search on PostgreSQL: the SQLite backend's BM25, float for float.

The same tokens (FTS5's own tokenizer at write time, store/fts5.py), the same statistics
(N and the mean length over the live memories of the realms searched, from ``kw_realms``; a
term's df over the same memories), the same formula (store/bm25.py) summed term by term in
the query's order, and the same order of equal scores (insertion order, SQLite's rowid, here
``memories.seq``): for the same content both backends return the same ids with the same
scores. Plain terms are scored inside PostgreSQL, which returns only the ``limit`` best
(:func:`_scored`); a search with a phrase (a term of several tokens) reads each term's holders
from ``kw_postings`` and scores them here (:func:`_scored_here`).
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
    unique = list(dict.fromkeys(terms))
    tokens = [stems(t) for t in unique]
    if limit <= 0 or not any(tokens):
        return []
    n, total = statistics(read, realms)
    avgdl = total / n if n else 0.0
    if all(len(t) <= 1 for t in tokens):
        plain = [t[0] for t in tokens if t]
        return _scored(read, plain, realms, keep, limit, column, n, avgdl)
    return _scored_here(read, unique, realms, keep, limit, column, n, avgdl)


#: The BM25 of one (memory, term) pair in SQL, in store/bm25.py's order of operations (the
#: same IEEE operations in the same order give the same double): ``h.tf`` and ``m.kw_length``
#: against the parameters idf, k1 + 1, k1, 1 - b, b and avgdl (or 1).
_PAIR_SCORE = (
    "greatest(ln(((%s::bigint - d.df)::float8 + 0.5::float8) / (d.df::float8 + 0.5::float8)),"
    " %s::float8) * ((h.tf * %s::float8) / (h.tf + %s::float8 * (%s::float8 + %s::float8 *"
    " m.kw_length::float8 / %s::float8)))"
)


def _scored(
    read: Read,
    tokens: Sequence[str],
    realms: Realms,
    keep: Keep,
    limit: int,
    column: str | None,
    n: int,
    avgdl: float,
) -> list[tuple[str, float]]:
    """:func:`search` for plain terms, scored by PostgreSQL: each term's live holders and
    their tf, each term's df over them, each kept memory's sum of its terms' scores in the
    query's order (the aggregate's ``ORDER BY``, so the float sum is SQLite's), the best
    ``limit``. Only those rows leave the server, however many memories hold the terms."""
    realm_sql, realm_params = realms.sql("p.realm")
    col_sql, col_params = ("", []) if column is None else (" AND p.col = %s", [COLUMNS[column]])
    constants = (n, bm25.MIN_IDF, bm25.K1 + 1, bm25.K1, 1 - bm25.B, bm25.B, avgdl or 1.0)
    rows = read(
        "WITH q (term, ord) AS (SELECT * FROM unnest(%s::text[]) WITH ORDINALITY), "
        "h AS MATERIALIZED (SELECT p.memory_id, q.ord, sum(cardinality(p.positions))::float8"
        " AS tf FROM q JOIN kw_postings p ON p.term = q.term JOIN memories l ON l.id ="
        f" p.memory_id WHERE {realm_sql}{col_sql} AND l.deleted_at IS NULL"
        " GROUP BY p.memory_id, q.ord), "
        "d AS (SELECT ord, count(*) AS df FROM h GROUP BY ord) "
        f"SELECT m.id, sum({_PAIR_SCORE} ORDER BY h.ord) AS score, m.seq "
        f"FROM h JOIN d ON d.ord = h.ord JOIN memories m ON m.id = h.memory_id {keep.join} "
        f"WHERE {keep.where} GROUP BY m.id, m.seq ORDER BY score DESC, m.seq LIMIT %s",
        (list(tokens), *realm_params, *col_params, *constants, *keep.params, limit),
    )
    return [(r[0], float(r[1])) for r in rows]


def _scored_here(
    read: Read,
    terms: Sequence[str],
    realms: Realms,
    keep: Keep,
    limit: int,
    column: str | None,
    n: int,
    avgdl: float,
) -> list[tuple[str, float]]:
    """:func:`search` when a term is a phrase: every term's holders read, scored here."""
    seqs: list[np.ndarray] = []
    parts: list[np.ndarray] = []
    ids: dict[int, str] = {}
    for term in terms:
        h = _holders(read, term, realms, keep, column)
        if not len(h.seq):
            continue
        part = bm25.idf(len(h.seq), n) * bm25.saturation(h.tf, h.length, avgdl)
        seqs.append(h.seq[h.keep])
        parts.append(np.asarray(part)[h.keep])
        kept = [i for i, k in zip(h.ids, h.keep.tolist(), strict=True) if k]
        ids.update(zip(h.seq[h.keep].tolist(), kept, strict=True))
    if not seqs:
        return []
    found, where = np.unique(np.concatenate(seqs), return_inverse=True)
    scores = np.bincount(where, weights=np.concatenate(parts), minlength=len(found))
    order = np.lexsort((found, -scores))[:limit]
    return [(ids[int(found[i])], float(scores[i])) for i in order]


def frequencies(read: Read, terms: Sequence[str], realms: Realms) -> tuple[int, dict[str, int]]:
    """N and each term's df over the collection, as :func:`search` counts them: plain terms
    counted by PostgreSQL in one query, phrases from their holders."""
    n, _ = statistics(read, realms)
    unique = list(dict.fromkeys(terms))
    plain = {t: stems(t) for t in unique}
    plain = {t: tokens[0] for t, tokens in plain.items() if len(tokens) == 1}
    counts: dict[str, int] = {}
    if plain:
        realm_sql, realm_params = realms.sql("p.realm")
        rows = read(
            "SELECT p.term, count(DISTINCT p.memory_id) FROM kw_postings p JOIN memories m ON "
            f"m.id = p.memory_id WHERE p.term = ANY(%s) AND {realm_sql} AND m.deleted_at IS "
            "NULL GROUP BY p.term",
            (sorted(set(plain.values())), *realm_params),
        )
        counts = {term: int(df) for term, df in rows}
    return n, {
        t: counts.get(plain[t], 0)
        if t in plain
        else len(_holders(read, t, realms, Keep(), None).seq)
        for t in unique
    }


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
