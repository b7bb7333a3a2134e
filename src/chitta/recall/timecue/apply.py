"""After the count: what a time cue does to a finished recall (seed 002 §2.3, §2.4, §2.9, §2.11).

The pipeline ran the cue arm (recall/timecue/arm.py) beside the ordinary lanes but let nothing
of it touch a fused score, the store's filters or the count. Once the count (and the
reranker, when one runs) has decided the returned rows, :func:`apply_cue`

1. moves the returned rows the cue arm also found, each up by at most L places
   (:func:`~chitta.recall.timecue.move.move`), and
2. appends up to L seats (:func:`~chitta.recall.timecue.move.seats`): the cue arm's best records
   that the answer does not hold and that were not refused. chitta's refusals are the
   store's filters (superseded, forgotten or deleted: the decisions ``superseded`` and
   ``missing``); it has no autocut, and its admission gate judges the returned rows at the
   edge (recall/confidence/gate.py), seats included. A seat may be a record the count cut (outcome
   ``cut``, ``inhibited`` or ``reranked``, which becomes ``seated``) or one no lane reached.

So the rows the count returned are exactly those of the recall without the cue, reordered,
followed by at most L more (§2.6).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from chitta.recall.lanes.base import in_scope
from chitta.recall.result import Hit, RecallResult
from chitta.recall.timecue.move import move, seats
from chitta.recall.trace import FILTERED
from chitta.store.base import Store
from chitta.store.records import Memory

#: The outcome of a candidate the count cut that a cue seat brought back.
SEATED = "seated"


def apply_cue(result: RecallResult, store: Store, *, include_superseded: bool) -> RecallResult:
    """``result`` with the cue's bounded move and its seats; unchanged without a cue that
    searched."""
    run = result.cue
    if run is None or not run.used:
        return result
    counted = tuple(h.memory.id for h in result.hits)
    ranks = run.ranks
    moved = move(counted, ranks, run.bound)
    by_id = {h.memory.id: h for h in result.hits}
    hits = [by_id[i] for i in moved.order]
    refused = {d.id for d in result.decisions if d.outcome in FILTERED}
    loaded = _loadable(store, run.ranking, result, include_superseded)
    refused |= {i for i in run.ranking if i not in loaded}
    chosen = seats(run.ranking, set(counted), refused, run.bound)
    decided = {d.id: d for d in result.decisions}
    was: list[str | None] = []
    for i in chosen:
        d = decided.get(i)
        was.append(None if d is None else d.outcome)
        if d is None:
            hits.append(Hit(memory=loaded[i], score=0.0, lanes={}, final=None))
        else:
            hits.append(Hit(memory=loaded[i], score=d.score, lanes=dict(d.lanes), final=d.final,
                            factors=d.factors))  # fmt: skip
    decisions = tuple(replace(d, outcome=SEATED) if d.id in chosen else d
                      for d in result.decisions)  # fmt: skip
    shared = dict(result.shared)
    if chosen and result.turn is not None:
        matched = store.term_matches(list(result.turn.distinctive), chosen)
        for i in chosen:
            shared[i] = tuple(w for w in result.turn.distinctive if w in matched.get(i, ()))
    done = replace(run, applied=True, counted=counted, moved=moved.moved, seated=tuple(chosen),
                   seat_was=tuple(was))  # fmt: skip
    return replace(result, hits=tuple(hits), decisions=decisions, cue=done,
                   shared=MappingProxyType(shared))  # fmt: skip


def _loadable(
    store: Store, ids: tuple[str, ...], result: RecallResult, include_superseded: bool
) -> dict[str, Memory]:
    """The cue arm's records that may still be seated: live, in the recall's scope and, unless
    asked for, not superseded (the arm's SQL filtered them already; this checks again
    against writes since, and never lets a record of another scope through)."""
    memories = store.get_many(list(ids))
    return {
        i: m
        for i, m in memories.items()
        if in_scope(m, result.scope) and (include_superseded or m.superseded_by is None)
    }
