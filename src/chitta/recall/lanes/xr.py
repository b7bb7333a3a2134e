"""``xr``: the same query over the store's other realms, off unless asked.

Over every other realm (with the recall's agent and channel axes) the dense and keyword lanes
run as they do at home: one cosine search across those realms, and one BM25 search per realm
merged by score (FTS5's ``bm25()`` takes its statistics from the whole table, so scores from
different realms compare). The two lists are fused by RRF (Cormack et al. 2009) into this
lane's one ranking. In the recall's own fusion ``xr`` is then one lane among the others, with
its own weight: a cross-realm memory can only rank by its ``xr`` contribution, so it is
recognisable (its only lane is ``xr`` and its realm is not the recall's). At weight 0.5 its
best rank is worth rank 62 of a weight-1 lane, so cross-realm hits fill the page when the
realm itself has little to say.
"""

from __future__ import annotations

from dataclasses import replace

from chitta.recall.fusion import rrf
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.kw import match_expression


class CrossRealmLane:
    name = "xr"
    derived = False  # searches the store from the query alone

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        dense: list[tuple[str, float]] = []
        if ctx.query_vector is not None:
            index = ctx.store.vector_index()
            dense = index.search_other_realms(ctx.query_vector, ctx.scope, ctx.depth)
        keyword: list[tuple[str, float]] = []
        if ctx.terms:
            expression = match_expression(list(ctx.terms))
            for realm in sorted(ctx.store.term_stats().realms()):
                if realm != ctx.scope.realm:
                    scope = replace(ctx.scope, realm=realm)
                    keyword += ctx.store.keyword_search(expression, scope, ctx.depth)
            keyword.sort(key=lambda item: -item[1])
        fused = rrf({"sem": dense, "kw": keyword[: ctx.depth]})
        return [(f.id, f.score) for f in fused[: ctx.depth]]
