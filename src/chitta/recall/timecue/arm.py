"""The cue arm: the recall's own scope, restricted to a time cue's period, searched again.

Seed 002 §2.2, §2.5, §2.7, §2.10, §2.11 (policy ``cued-v0.3``). The arm searches the live
memories of the recall's scope (realm, agent, channel exactly as the other lanes: isolation is
never widened) whose time — ``event_time``, else ``created_at`` — or whose episode's start
lies in the period:

- the **vector half** ranks them by cosine to the query vector the ordinary lanes already
  embedded (no second embedding; without one, as under the keyword strategy, the arm is
  keyword only), :data:`~chitta.recall.timecue.move.CUE_DEPTH` deep;
- the **keyword half** ranks them by BM25 over the query's keyword terms (the realm's own
  statistics, store/sqlite/keywords.py), as deep;
- the halves are merged by reciprocal rank (:func:`~chitta.recall.timecue.move.merge_cue_scores`).

chitta's episodes carry no text or vector of their own, so "the cue arm searches episodes"
(§2.10) is read as: a memory belongs to the period when its episode started in it.

If the first stage finds nothing, the loop suspects CANDIDATE_MISS and, within the time
limit, runs the one revision (§2.5): the arm alone, over the period widened by one
confidence step. The other lanes' results are reused. What the cue then does to the answer
(the move and the seats, after the count) is :mod:`chitta.recall.timecue.apply`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chitta.recall.timecue.cue import (
    CuePlan,
    CueReport,
    Stage,
    TimeCue,
    plan_cue,
    unused_report,
)
from chitta.recall.timecue.move import CUE_DEPTH, cue_ranks, merge_cue_scores
from chitta.store.base import Store
from chitta.store.records import Scope

#: A period of up to this many memories is listed and its vectors scored directly; a larger
#: one is searched through the scope's vector index (store/vectors.py filters agents and
#: channels the same way).
MAX_LISTED = 5_000
#: How many of the scope's nearest memories a large period is looked for among.
SCOPE_CANDIDATES = 2_000
#: Why a wanted revision did not run (CueReport.stopped).
TIME_LIMIT = "time_limit"
NO_WIDER_PERIOD = "no_wider_period"


@dataclass(frozen=True, slots=True)
class CueSearch:
    """One search of the cue arm: the stage (confidence step, period with its margin, L),
    the merged ranking ``(id, reciprocal-rank score)`` best first, and each half's size."""

    stage: Stage
    ranking: tuple[tuple[str, float], ...]
    vector: int
    keyword: int
    ms: float


@dataclass(frozen=True, slots=True)
class CueRun:
    """What a time cue did in one recall.

    ``plan`` and ``searches`` are filled by the pipeline (:func:`run_cue`): no search when
    the cue is ignored (recent only) or names no period (an empty scope); two when the first
    found nothing and the revision ran. ``stopped`` says why a wanted revision did not run.
    The rest is filled after the count (:func:`chitta.recall.timecue.apply.apply_cue`): ``applied``,
    the returned order before the move (``counted``), the rows whose place changed
    (``moved``) and the seated records (``seated``), with where each seat came from
    (``seat_was``: its outcome before it was seated, ``None`` for one no lane reached).
    """

    given: TimeCue
    plan: CuePlan
    searches: tuple[CueSearch, ...] = ()
    stopped: str | None = None
    applied: bool = False
    counted: tuple[str, ...] = ()
    moved: int = 0
    seated: tuple[str, ...] = ()
    seat_was: tuple[str | None, ...] = ()

    @property
    def used(self) -> bool:
        """Whether the cue arm searched at all (the cue was neither ignored nor periodless)."""
        return bool(self.searches)

    @property
    def last(self) -> CueSearch | None:
        return self.searches[-1] if self.searches else None

    @property
    def revised(self) -> bool:
        return len(self.searches) > 1

    @property
    def bound(self) -> int:
        """L of the confidence step searched last (§2.7); 0 when the arm did not search."""
        return self.searches[-1].stage.bound if self.searches else 0

    @property
    def ranking(self) -> tuple[str, ...]:
        """The last search's ranking, best first (the first found nothing when revised)."""
        return tuple(i for i, _ in self.searches[-1].ranking) if self.searches else ()

    @property
    def ranks(self) -> dict[str, int]:
        """Each found id's cue rank, 1 for the best."""
        return cue_ranks(self.ranking)

    @property
    def report(self) -> CueReport:
        """The response's ``time_cue`` block."""
        last = self.last
        if last is None:
            return unused_report(self.plan)
        return CueReport(last.stage.confidence, last.stage.period, revised=self.revised,
                         moved=self.moved, seats=len(self.seated),
                         stopped=self.stopped)  # fmt: skip


def run_cue(
    store: Store,
    cue: TimeCue,
    *,
    scope: Scope,
    terms: Sequence[str],
    vector: np.ndarray | None,
    now_ms: int,
    include_superseded: bool,
    started: float,
    limit_ms: int,
) -> CueRun:
    """Plan ``cue`` against the scope and run the cue arm's stages.

    ``started`` is the recall's start (``time.perf_counter()``); the revision runs only when
    less than ``limit_ms`` has passed since (§2.7).
    """
    oldest = None
    if cue.long_ago or (cue.unit is None and cue.after_ms is None):
        oldest = store.scope_oldest(scope)  # only these cues read the scope's oldest record
    plan = plan_cue(cue, now_ms, oldest)
    run = CueRun(cue, plan)
    if not plan.stages:
        return run
    searches = [_search(store, plan.stages[0], scope, terms, vector, include_superseded)]
    stopped = None
    if not searches[0].ranking:
        if len(plan.stages) < 2:
            stopped = NO_WIDER_PERIOD
        elif (time.perf_counter() - started) * 1000 >= limit_ms:
            stopped = TIME_LIMIT
        else:
            searches.append(
                _search(store, plan.stages[1], scope, terms, vector, include_superseded)
            )
    return CueRun(cue, plan, tuple(searches), stopped)


def _search(
    store: Store,
    stage: Stage,
    scope: Scope,
    terms: Sequence[str],
    vector: np.ndarray | None,
    include_superseded: bool,
) -> CueSearch:
    t = time.perf_counter()
    start, end = stage.period.start_ms, stage.period.end_ms
    near: list[tuple[str, float]] = []
    if vector is not None and end > start:
        near = vector_half(store, vector, scope, start, end, include_superseded=include_superseded)
    words: list[tuple[str, float]] = []
    # An empty period (one indexed probe, asked only when the vector half found nothing)
    # skips the keyword half, which would rank every holder of the terms to keep none.
    if terms and end > start and (near or store.period_ids(
            scope, start, end, include_superseded=include_superseded, limit=0) != []):  # fmt: skip
        words = store.period_keyword_search(
            terms, scope, start, end, CUE_DEPTH, include_superseded=include_superseded
        )
    ranking = merge_cue_scores([[i for i, _ in near], [i for i, _ in words]])
    ms = round((time.perf_counter() - t) * 1000, 3)
    return CueSearch(stage, tuple(ranking), len(near), len(words), ms)


def vector_half(
    store: Store,
    vector: np.ndarray,
    scope: Scope,
    start_ms: int,
    end_ms: int,
    *,
    include_superseded: bool,
    depth: int = CUE_DEPTH,
    max_listed: int = MAX_LISTED,
    scope_candidates: int = SCOPE_CANDIDATES,
) -> list[tuple[str, float]]:
    """The ``depth`` in-period memories of ``scope`` nearest ``vector``: (id, cosine).

    A period of at most ``max_listed`` memories is listed by the store and scored directly. A
    larger one is searched through the scope's vector index, exactly (an HNSW search this
    deep costs more than one product over the scope): its ``scope_candidates`` nearest, of
    which those in the period are kept, when at least ``depth`` survive or that was the whole
    scope; failing that, the period is listed after all. Either way the store decides
    what is in the period and in scope.
    """
    listed = store.period_ids(scope, start_ms, end_ms, include_superseded=include_superseded,
                              limit=max_listed)  # fmt: skip
    if listed is None:
        found = store.vector_search(vector, scope, scope_candidates, exact=True)
        keep = set(store.period_ids(scope, start_ms, end_ms, include_superseded=include_superseded,
                                    among=[i for i, _ in found]) or ())  # fmt: skip
        kept = [(i, s) for i, s in found if i in keep][:depth]
        if len(kept) >= depth or len(found) < scope_candidates:
            return kept
        listed = store.period_ids(scope, start_ms, end_ms, include_superseded=include_superseded)
    return store.vector_search_among(vector, listed or (), depth)
