"""``when``: the memories of the time the question names in its own words.

"What did we decide in March 2024?", "… two weeks ago?": :func:`read_when` reads the phrase
as a time cue against the recall's now, and the lane ranks the scope's memories of that
period (with the cue's margin) as the cue arm does: by cosine to the query and by BM25 over
its keyword terms, merged by reciprocal rank (recall/timecue/arm.py). Silent when the
question names no time. Unlike a caller's ``time_cue``, which moves rows after the count
(§2.7), this is a lane: its finds are fused with the others' and weigh what its weight says.
"""

from __future__ import annotations

import time

from chitta.recall.lanes.base import LaneContext
from chitta.recall.timecue.arm import run_cue
from chitta.recall.timecue.cue import CUE_TIME_LIMIT_MS
from chitta.recall.timecue.words import read_when


class WhenLane:
    name = "when"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        started = time.perf_counter()
        now = ctx.now if ctx.now is not None else int(time.time() * 1000)

        def holds(start: int, end: int) -> bool:
            # None: more than one memory in the span; [] none.
            return ctx.store.period_ids(ctx.scope, start, end, include_superseded=False,
                                        limit=1) != []  # fmt: skip

        cue = read_when(ctx.query, now, holds)
        if cue is None:
            return []
        # As a caller's cue: a period that holds nothing is searched once more, a confidence
        # step wider ("on 13 October" told the next morning).
        run = run_cue(ctx.store, cue, scope=ctx.scope, terms=ctx.terms, vector=ctx.query_vector,
                      now_ms=now, include_superseded=False, started=started,
                      limit_ms=CUE_TIME_LIMIT_MS)  # fmt: skip
        last = run.last
        return [] if last is None else list(last.ranking[: ctx.depth])
