"""``theme``: seed 001's two-stage retrieval over themes (Theme System, after xMemory).

The store groups each realm's memories into themes as they are written (store/themes.py:
seed 001's ``semantic_weight × cosine + sparsity_weight × sparsity``, split, merge and
reassign in bounded work). **Stage 1** finds diverse theme representatives: the themes whose
centroids match the query, picked for breadth by maximal marginal relevance, so a question
that spans two subjects reaches both rather than two themes of one. **Stage 2** expands within
them: their memories in the recall's scope, each scored by its own cosine with the query plus
its theme's, so a memory of the best theme leads one of equal cosine from a weaker theme.

Unlike ``ep`` (episodes as units) the units here are found, not recorded: a subject that runs
through many sessions is one theme, and a memory stored outside any episode has one too.
"""

from __future__ import annotations

from dataclasses import dataclass

from chitta.recall.lanes.base import LaneContext

#: Themes expanded in stage 2: with themes of about 12 memories (store/themes.py), five give
#: the lane some 60 candidates, the depth of a recall of 10-15.
THEMES = 5
#: How much stage 1's choice weighs breadth (the cosine with themes already picked) against
#: the cosine with the query; 0 picks the best-matching themes whatever they repeat.
DIVERSITY = 0.3


@dataclass(frozen=True, slots=True)
class ThemeLane:
    name: str = "theme"
    derived: bool = False  # searches the store from the query alone
    themes: int = THEMES
    diversity: float = DIVERSITY
    #: How much of its theme's cosine a memory's score carries (0: its own cosine alone).
    theme_weight: float = 1.0

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if ctx.query_vector is None:
            return []
        return ctx.store.themes().search(
            ctx.query_vector,
            ctx.scope,
            ctx.depth,
            themes=self.themes,
            diversity=self.diversity,
            theme_weight=self.theme_weight,
        )
