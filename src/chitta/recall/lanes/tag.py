"""``tag``: memories whose tags match a word of the query (seed 001: tag matching).

A small signal beside the others: it runs the query's distinctive terms against the tags
column of the FTS5 index only, so a memory tagged ``storage`` is found by "storage options?"
even when its text says "SQLite".
"""

from __future__ import annotations

from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.kw import match_expression


class TagLane:
    name = "tag"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.terms:
            return []
        expression = f"tags : ({match_expression(list(ctx.terms))})"
        return ctx.store.keyword_search(expression, ctx.scope, ctx.depth)
