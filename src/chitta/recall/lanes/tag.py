"""``tag``: memories whose tags match a word of the query (seed 001: tag matching).

A small signal beside the others: it runs the query's distinctive terms against the tags
column of the FTS5 index only (BM25 with the realm's statistics, as ``kw``), so a memory
tagged ``storage`` is found by "storage options?" even when its text says "SQLite".
"""

from __future__ import annotations

from chitta.recall.lanes.base import LaneContext


class TagLane:
    name = "tag"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.terms:
            return []
        return ctx.store.keyword_search(ctx.terms, ctx.scope, ctx.depth, column="tags")
