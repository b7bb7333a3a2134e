"""``xr``: the same query over the store's other realms, off unless ``cross_realm`` asks.

Over every other realm (with the recall's agent and channel axes) the dense and keyword lanes
run as they do at home: one cosine search across those realms (each memory scored by its
whole and its best sentence, as ``sem`` scores it), and one BM25 search over them taken as
one collection (N, df and the average length over all the other realms together,
store/sqlite/keywords.py, so their scores compare; the recall's own realm is not counted).
The two lists are fused by RRF (Cormack et al. 2009) into this lane's one ranking. In the recall's
own fusion ``xr`` is then one lane among the others, with its own weight: a cross-realm
memory can only rank by its ``xr`` contribution, so it is recognisable (its only lane is
``xr`` and its realm is not the recall's). At weight 0.5 its best rank is worth rank 62 of a
weight-1 lane, so cross-realm hits fill the page when the realm itself has little to say.
"""

from __future__ import annotations

from chitta.recall.fusion import rrf
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.sem import by_best_piece


class CrossRealmLane:
    name = "xr"
    derived = False  # searches the store from the query alone

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        dense: list[tuple[str, float]] = []
        if ctx.query_vector is not None:
            found = ctx.store.vector_search_elsewhere(ctx.query_vector, ctx.scope, ctx.depth)
            dense = by_best_piece(ctx.store, found, ctx.query_vector)
        keyword: list[tuple[str, float]] = []
        if ctx.terms:
            keyword = ctx.store.keyword_search_elsewhere(ctx.terms, ctx.scope, ctx.depth)
        fused = rrf({"sem": dense, "kw": keyword})
        return [(f.id, f.score) for f in fused[: ctx.depth]]
