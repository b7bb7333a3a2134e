"""``sem``: dense vector seeds over the scope's vectors, each scored by its whole text and its
best sentence together.

The nearest memories by their whole vector are found first; those that have pieces (their
sentences' own vectors, embed/pieces.py) are then scored by the mean of the whole cosine and
the better of it and the best sentence's: a memory one sentence of which answers the query
rises over one that only resembles it throughout (MaxP, Dai & Callan 2019, here beside the
whole text rather than in place of it; issue 19's rule chose the mean on both development
sets' tuning halves, docs/benchmarks.md "A memory's best sentence").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from chitta.embed.pieces import best_cosine
from chitta.recall.lanes.base import LaneContext

if TYPE_CHECKING:
    from chitta.store.base import Store


class SemanticLane:
    name = "sem"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if ctx.query_vector is None:
            return []
        found = ctx.store.vector_search(ctx.query_vector, ctx.scope, ctx.depth)
        return by_best_piece(ctx.store, found, ctx.query_vector)


def by_best_piece(
    store: Store, found: list[tuple[str, float]], query: np.ndarray
) -> list[tuple[str, float]]:
    """A vector search's results (id, whole cosine) rescored by :func:`with_best_piece`
    with the pieces the store holds for them, best first (as found when none has any)."""
    pieces = store.pieces_for([memory_id for memory_id, _ in found]) if found else {}
    if not pieces:
        return found
    scored = [(memory_id, with_best_piece(whole, pieces.get(memory_id), query))
              for memory_id, whole in found]  # fmt: skip
    return sorted(scored, key=lambda item: -item[1])


def with_best_piece(whole: float, pieces: bytes | None, query: np.ndarray) -> float:
    """A memory's score from its whole cosine and, when it has pieces (packed, as the store
    keeps them), its best piece's: ``(whole + max(whole, best)) / 2``; the whole cosine alone
    when it has none, so memories with and without pieces stay comparable."""
    if not pieces:
        return whole
    best = best_cosine(pieces, query)
    return (whole + max(whole, best)) / 2
