"""``common``: of the candidates found, those that contain the query's common words.

recall/query.py leaves out of the search the query words that most memories of the realm
contain — a speaker's name that starts every turn, a project's own name — because searching
by them finds everything. They still say something: "What did Melanie paint?" is about
Melanie's turns. This lane does not search; it ranks the candidates the other lanes found
(in their fused order) that contain at least one of those words, so such a word can tip the
order among candidates but cannot bring one in. Empty when the query has no common word.
"""

from __future__ import annotations

from dataclasses import dataclass

from chitta.recall.lanes.base import LaneContext
from chitta.store.terms import words


@dataclass(frozen=True, slots=True)
class CommonWordLane:
    name: str = "common"
    derived: bool = True

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.common or not ctx.seeds:
            return []
        common = set(ctx.common)
        loaded = ctx.memories(ctx.seeds)
        ranked = []
        for memory_id in ctx.seeds:
            memory = loaded.get(memory_id)
            if memory is not None and (shared := common & words(memory.content)):
                ranked.append((memory_id, float(len(shared))))
        return ranked[: ctx.depth]
