"""``common``: of the candidates found, those that contain the query's common words.

recall/query.py leaves out of the search the query words that most memories of the realm
contain — a speaker's name that starts every turn, a project's own name — because searching
by them finds everything. They still say something: "What did Melanie paint?" is about
Melanie's turns. This lane does not search; it ranks the candidates the other lanes found
(in their fused order) that contain at least one of those words, so such a word can tip the
order among candidates but cannot bring one in. Empty when the query has no common word.

Only the common words the query writes as names count (capitalised: "Melanie", "Postgres"):
a name that most memories hold still says whose or what's they are, a common word of the
language ("recommend", "time", common in a realm of long assistant replies) says nothing,
and on LongMemEval letting such words tip the order cost nDCG@10 0.044 (issue 19).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chitta.recall.lanes.base import LaneContext
from chitta.store.terms import words

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class CommonWordLane:
    name: str = "common"
    derived: bool = True

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.common or not ctx.seeds:
            return []
        common = set(ctx.common) & written_as_names(ctx.query)
        if not common:
            return []
        loaded = ctx.memories(ctx.seeds)
        ranked = []
        for memory_id in ctx.seeds:
            memory = loaded.get(memory_id)
            if memory is not None and (shared := common & words(memory.content)):
                ranked.append((memory_id, float(len(shared))))
        return ranked[: ctx.depth]


def written_as_names(text: str) -> set[str]:
    """The words ``text`` writes with a capital first letter, lower-cased (a token's first
    word: "Caroline's" is ``caroline``)."""
    names = set()
    for token in text.split():
        found = _WORD.findall(token)
        if found and found[0][:1].isupper():
            names.add(found[0].lower())
    return names
