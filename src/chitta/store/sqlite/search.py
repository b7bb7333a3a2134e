"""Search: cosine over the in-memory vector index, the hdc lane's sparse codes, BM25 over
the FTS5 index with each realm's own statistics, and the time cue's period."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from chitta.store import fts5, portable
from chitta.store.assessment import AssessmentReads, AssessmentRequest
from chitta.store.conditions import TIME
from chitta.store.records import Scope
from chitta.store.sqlite import keywords
from chitta.store.sqlite.indexes import Indexes
from chitta.store.sqlite.rows import period_sql, scope_sql
from chitta.store.warm import timed_parts

#: A keyword search checks this many times its limit of its best candidates against the
#: scope (agent, channel, period) at once, and twice as many each time too few pass.
KW_OVERFETCH = 2
#: The warm-up reads the doclists of words this many memories of a realm hold (or more): a
#: rarer word's list is read by the first search for it in well under a millisecond.
PRELOAD_DF = 50


class Search(Indexes):
    """Vector, sparse, keyword and period search."""

    # --- vector search (the in-memory index, indexes.py) --------------------------------------

    def vector_count(self) -> int:
        """Live memories with a vector."""
        return len(self.vector_index())

    def vector_search(
        self, vector: np.ndarray, scope: Scope, k: int, *, exact: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` live memories of ``scope`` nearest ``vector``: (id, cosine), best first;
        through the realm's HNSW graph when it has one, unless ``exact``."""
        return self.vector_index().search(vector, scope, k, exact=exact)

    def vector_search_among(
        self, vector: np.ndarray, ids: Sequence[str], k: int
    ) -> list[tuple[str, float]]:
        """:meth:`vector_search` over the live memories ``ids`` only, exactly."""
        return self.vector_index().search_among(vector, ids, k)

    def vector_search_elsewhere(
        self, vector: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]]:
        """:meth:`vector_search` over every realm but ``scope``'s (its agent and channel)."""
        return self.vector_index().search_other_realms(vector, scope, k)

    def vector_search_is_approximate(self, realm: str) -> bool:
        """Whether :meth:`vector_search` of ``realm`` goes through an HNSW graph now."""
        return self.vector_index().has_graph(realm)

    def sparse_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[tuple[str, float]]:
        """The hdc lane: the ``k`` live memories of ``scope`` sharing most sparse features
        with ``vector`` (store/sparse.py)."""
        return self.sparse_index().search(vector, scope, k)

    # --- keyword search (keywords.py) ---------------------------------------------------------

    def keyword_search(
        self, terms: Sequence[str], scope: Scope, limit: int, *, column: str | None = None
    ) -> list[tuple[str, float]]:
        """BM25 over ``scope`` with its realm's own statistics (keywords.py): (memory id,
        score), best first, equal scores oldest first; higher is better.

        Each of ``terms`` (plain words) is matched as the index matches a quoted term: Porter
        stems, accents folded. ``column="tags"`` searches the tags alone.
        """
        rows = self._rows()
        rank = partial(keywords.search, self._query, rows, terms, [scope.realm], column)
        return self._first_in_scope(rank, *scope_sql(scope, "m"), limit)

    def keyword_search_elsewhere(
        self, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[str, float]]:
        """:meth:`keyword_search` over every realm but ``scope``'s (with its agent and channel),
        those realms taken as one collection: N, df and the average length over all of them,
        so that their scores compare."""
        rows = self._rows()
        realms = [realm for realm in rows.codes if realm != scope.realm]
        rank = partial(keywords.search, self._query, rows, terms, realms)
        return self._first_in_scope(rank, *scope_sql(scope, "m", elsewhere=True), limit)

    def keyword_frequencies(self, terms: Sequence[str], realm: str) -> tuple[int, dict[str, int]]:
        """The statistics :meth:`keyword_search` scores ``realm`` with: its live memories, and
        how many of them hold each term."""
        return keywords.frequencies(self._query, self._rows(), terms, [realm])

    def assessment_reads(self, request: AssessmentRequest) -> AssessmentReads:
        """The assessment stage's three reads (store/assessment.py), one after another: each
        is answered from the in-process indexes or the file as its own method answers it."""
        size, df = None, {}
        if request.frequencies is not None:
            size, df = self.keyword_frequencies(request.frequencies, request.realm)
        return AssessmentReads(
            vectors=self.vectors_for(request.vectors) if request.vectors else {},
            matches=self.term_matches(request.terms, request.holders),
            size=size,
            df=df,
        )

    def warm(self, stop: Callable[[], bool] | None = None) -> dict[str, float]:
        """The term statistics and the keyword search's rows (every recall plans its query
        with them), the correction index, the vectors and any HNSW graph (the longest),
        then the common words' doclists (a search reads any it lacks)."""
        stopped = stop or (lambda: False)
        return timed_parts({"terms": self.term_stats, "keyword_rows": self._rows,
                            "corrections": self.corrections, "vectors": self.vector_index,
                            "keyword_lists": lambda: self._preload_lists(stopped)},
                           stop)  # fmt: skip

    def _preload_lists(self, stop: Callable[[], bool]) -> int:
        """Read the doclists of the words at least :data:`PRELOAD_DF` memories of a realm
        hold, under no lock (a recall meanwhile reads what it needs itself)."""
        words = self.term_stats().common(PRELOAD_DF)
        return keywords.preload(self._query, self._rows(), words, stop)

    def _first_in_scope(
        self,
        rank: Callable[..., keywords.Ranked],
        where: str,
        params: Sequence[object],
        limit: int,
        join: str = "",
    ) -> list[tuple[str, float]]:
        """The first ``limit`` of the ranking that are live and satisfy ``where`` (over
        ``memories m`` and ``join``), with their ids, in ranked order. ``rank(k=...)`` ranks
        at least the best ``k`` (keywords.search); when too few of those pass, the whole
        ranking is asked for."""
        hits: list[tuple[str, float]] = []
        ranked = rank(k=limit)
        start, batch = 0, limit * KW_OVERFETCH
        while len(hits) < limit:
            if start >= ranked.exact:
                if ranked.whole:
                    break
                ranked = rank(k=None)  # the same order, every holder in it
                continue
            end = min(start + batch, ranked.exact)
            rowids = [int(r) for r in ranked.rowids[start:end]]
            ids = dict(self._query(
                f"SELECT m.rowid, m.id FROM json_each(?) w CROSS JOIN memories m ON m.rowid = "
                f"w.value {join} WHERE m.deleted_at IS NULL AND {where}",
                (json.dumps(rowids), *params),
            ))  # fmt: skip
            scores = ranked.scores[start:end]
            hits += [(ids[r], float(s)) for r, s in zip(rowids, scores, strict=True) if r in ids]
            start, batch = end, batch * 2
        return hits[:limit]

    # --- the time cue's period (recall/timecue/arm.py; seed 002 §2.2, §2.10) ----------------

    def scope_oldest(self, scope: Scope) -> int | None:
        """When the scope's oldest live record happened (store/portable.py)."""
        return portable.scope_oldest(self._query, "?", scope)

    def period_ids(
        self,
        scope: Scope,
        start_ms: int,
        end_ms: int,
        *,
        include_superseded: bool,
        among: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[str] | None:
        """The live memories of ``scope`` in the period ``[start_ms, end_ms)``: a memory's
        time (``event_time``, else ``created_at``) or its episode's start lies in it.
        Superseded ones only with ``include_superseded``. Only those of ``among``, when
        given; ``None`` when ``limit`` is given and the period holds more than that."""
        where, params = scope_sql(scope, "m")
        live = "m.deleted_at IS NULL"
        if not include_superseded:
            live += " AND m.superseded_by IS NULL"
        # A whole period in two parts, each with its own index: the memory's own time (a
        # scan of the scope), and the episodes that started in it (episodes_realm, then
        # memories_episode).
        if among is None:
            bound = "" if limit is None else f" LIMIT {int(limit) + 1}"
            rows = self._query(
                f"SELECT m.id FROM memories m WHERE {where} AND {live} AND {TIME} >= ? AND "
                f"{TIME} < ? UNION ALL SELECT m.id FROM episodes e JOIN memories m ON "
                "m.episode_id = e.id WHERE e.realm = ? AND e.started_at >= ? AND "
                f"e.started_at < ? AND {where} AND {live}{bound}",
                (*params, start_ms, end_ms, scope.realm, start_ms, end_ms, *params),
            )
            if limit is not None and len(rows) > limit:
                return None
            return list(dict.fromkeys(r[0] for r in rows))
        # CROSS JOIN keeps the given ids the outer loop, each looked up by its key (the
        # planner would otherwise scan the scope's index once per list).
        period, times = period_sql(start_ms, end_ms, include_superseded)
        rows = self._query(
            "SELECT m.id FROM json_each(?) w CROSS JOIN memories m ON m.id = w.value "
            f"LEFT JOIN episodes e ON e.id = m.episode_id WHERE {where} AND "
            f"m.deleted_at IS NULL AND {period}",
            (json.dumps(list(among)), *params, *times),
        )
        return list(dict.fromkeys(r[0] for r in rows))

    def period_keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        start_ms: int,
        end_ms: int,
        limit: int,
        *,
        include_superseded: bool,
    ) -> list[tuple[str, float]]:
        """:meth:`keyword_search` over the period's memories only (see :meth:`period_ids`),
        scored with the whole realm's statistics."""
        where, params = scope_sql(scope, "m")
        period, times = period_sql(start_ms, end_ms, include_superseded)
        # Every holder ranked at once: a period passes few of them.
        ranked = keywords.search(self._query, self._rows(), terms, [scope.realm])
        return self._first_in_scope(lambda k: ranked, f"{where} AND {period}",
                                    [*params, *times], limit,
                                    join="LEFT JOIN episodes e ON e.id = m.episode_id")  # fmt: skip

    def term_matches(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each of ``ids`` holds, as the keyword lane matches them: from
        the terms' doclists (kept in memory, keywords.py), so the cost is a lookup per hit,
        not the terms' posting lists read from the index; a term the tokenizer splits into
        a phrase, and a memory forgotten or newer than the keyword rows, from their own text
        tokenized as the index tokenizes it (store/fts5.py)."""
        if not terms or not ids:
            return {}
        rows = self._rows()
        marks = ", ".join("?" * len(ids))
        found = self._query(f"SELECT id, rowid FROM memories WHERE id IN ({marks})", ids)
        # The lists hold every live row up to the top; a forgotten one's words may be
        # missing (a memory stored already forgotten is never added), so it is read.
        known = [(i, r) for i, r in found if r <= rows.top and rows.realm[r] >= 0]
        rowids = np.array([r for _, r in known], dtype=np.int64)
        matched: dict[str, set[str]] = {}
        phrases = []
        for term in dict.fromkeys(terms):
            held = keywords.holds(self._query, rows, term, rowids)
            if held is None:
                phrases.append(term)
                continue
            for (memory_id, _), yes in zip(known, held.tolist(), strict=True):
                if yes:
                    matched.setdefault(memory_id, set()).add(term)
        others = [i for i, r in found if r > rows.top or rows.realm[r] < 0]
        for words, among in ((phrases, [i for i, _ in known]), (list(terms), others)):
            for memory_id, held_words in self._matches_by_text(words, among).items():
                matched.setdefault(memory_id, set()).update(held_words)
        return matched

    def _matches_by_text(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        """:meth:`term_matches` of ``ids`` from their own text."""
        if not terms or not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._query(f"SELECT id, content, tags FROM memories WHERE id IN ({marks})", ids)
        return fts5.matches(terms, {i: (content, tags) for i, content, tags in rows})
