"""``hdc``: memories whose sparse codes overlap the query's (seed 000's hyperdimensional lane).

The query's embedding is coded like every memory's (64 of 16,384 features, store/sparse.py,
after Dasgupta, Stevens & Navlakha 2017) and candidates come from the posting lists of its
64 features, scored by the summed product of shared activations. ``disable_hdc`` and
``CHITTA_ABLATE_LANES=hdc`` skip it; it exists for ablation and benchmarking (seed 000).
"""

from __future__ import annotations

from chitta.recall.lanes.base import LaneContext


class HdcLane:
    name = "hdc"
    derived = False  # searches the store from the query alone

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if ctx.query_vector is None:
            return []
        return ctx.store.sparse_search(ctx.query_vector, ctx.scope, ctx.depth)
