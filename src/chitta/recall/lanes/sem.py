"""``sem``: dense vector seeds, exact cosine over the scope's vectors."""

from __future__ import annotations

from chitta.recall.lanes.base import LaneContext


class SemanticLane:
    name = "sem"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if ctx.query_vector is None:
            return []
        return ctx.store.vector_search(ctx.query_vector, ctx.scope, ctx.depth)
