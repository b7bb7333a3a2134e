"""The recall pipeline: run the configured lanes over a scope, fuse, score, cut (rank.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from chitta.code.stale import Judge
from chitta.embed.base import Embedder
from chitta.errors import BadArgument
from chitta.recall.confidence.calibration import DEFAULT as DEFAULT_CALIBRATION
from chitta.recall.confidence.calibration import (
    Calibration,
    Confidence,
    confidence,
    found_share,
    max_relevance,
    words_held,
)
from chitta.recall.confidence.gate import Turn, bm25_ceiling, read_turn
from chitta.recall.config import MAX_LIMIT, RecallConfig
from chitta.recall.fusion import Fused, rrf, rsf
from chitta.recall.lanes import LANES, NEEDS_VECTOR, OUTSIDE_SCOPE, Lane, LaneContext
from chitta.recall.lanes.base import in_scope
from chitta.recall.lanes.corr import CorrectionMatch, lookup_corrections
from chitta.recall.query import QueryPlan, asks_for_agent_words, plan_query
from chitta.recall.rank import rank
from chitta.recall.result import Decision, Hit, RecallResult
from chitta.recall.scoring import by_own_factors
from chitta.recall.scoring_config import DEFAULT as DEFAULT_SCORING
from chitta.recall.scoring_config import ScoringConfig
from chitta.recall.session import SessionView
from chitta.recall.timecue.arm import run_cue
from chitta.recall.timecue.cue import CUE_TIME_LIMIT_MS, TimeCue
from chitta.recall.updates import mark_updates
from chitta.store.assessment import AssessmentRequest
from chitta.store.base import Store
from chitta.store.code_links import IndexRun
from chitta.store.records import Scope
from chitta.store.terms import TermStats

if TYPE_CHECKING:
    from chitta.learn.learner import Tuning

#: What may set a recall's config once its query is read: the config, the query's plan and
#: the term statistics in; the config to run and what was set (None: nothing) out.
Tuner = Callable[[RecallConfig, QueryPlan, TermStats], tuple[RecallConfig, "Tuning | None"]]

#: How many fused candidates the maximum relevance is taken over (recall/confidence/calibration.py).
MAXREL_DEPTH = 40


def recall(
    store: Store,
    embedder: Embedder,
    query: str,
    scope: Scope,
    *,
    limit: int,
    config: RecallConfig,
    include_superseded: bool = False,
    session: SessionView | None = None,
    scoring: ScoringConfig = DEFAULT_SCORING,
    now_ms: int | None = None,
    calibration: Calibration = DEFAULT_CALIBRATION,
    time_cue: TimeCue | None = None,
    cue_time_limit_ms: int = CUE_TIME_LIMIT_MS,
    code_as_of: dict[str, IndexRun] | None = None,
    tuner: Tuner | None = None,
) -> RecallResult:
    """The ``limit`` best memories in ``scope`` for ``query`` under ``config``.

    A memory another one supersedes is left out unless ``include_superseded``. ``session``
    is what the asking agent session did lately, for the ``ctx`` lane's priming. ``scoring``
    weighs the scoring stage; ``now_ms`` is the time its recency factor is taken at.
    ``calibration`` turns the maximum relevance into the result's ``confidence``.
    ``time_cue`` runs the cue arm beside the lanes (seed 002 §2; its revision only within
    ``cue_time_limit_ms`` of the start); it changes nothing here: what it does to the answer
    comes after the count (recall/timecue/apply.py).
    A memory linked to a symbol whose code changed since is marked ``possibly_stale`` and
    scored a little lower (code/stale.py): against the symbol table now, or as of the index
    runs of ``code_as_of`` (repo → run; ``recall --as-of-commit``).
    """
    if not query.strip():
        raise BadArgument("query is empty")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    timing: dict[str, float] = {}
    start = time.perf_counter()
    lanes = [LANES[name] for name in config.lane_weights if name in LANES]
    stats = store.term_stats()
    plan = plan_query(
        query, lambda w: stats.df(scope.realm, w), stats.size(scope.realm), config.common_fraction
    )
    if asks_for_agent_words(query):  # the agent's replies are what is asked for
        scoring = scoring.asked_of_agent()
    tuning = None
    if tuner is not None:
        config, tuning = tuner(config, plan, stats)
    timing["plan"] = _ms_since(start)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    ctx = LaneContext(
        query, plan.terms, None, scope, config.depth(limit), store, common=plan.common,
        session=session.name if session else None,
        primed=session.primed if session else (), topics=session.topics if session else (),
        now=now, tuning=tuning.values if tuning is not None else MappingProxyType({}),
    )  # fmt: skip
    gathered = _gather(embedder, plan, lanes, config, ctx, timing, scoring)
    ctx = gathered.ctx
    judge = Judge(store, scope.realm, code_as_of)
    ranking = _rank(gathered, config, limit, scoring, include_superseded, now, timing, judge)
    t = time.perf_counter()
    assessed = _assess(gathered, ranking, stats, config, calibration)
    timing["confidence"] = _ms_since(t)
    hits, newer = ranking.hits, {}
    if config.updates:
        t = time.perf_counter()
        marked, newer = mark_updates(store, hits, config.newer_first, assessed.vectors)
        hits = tuple(marked)
        timing["updates"] = _ms_since(t)
    corrections: tuple[CorrectionMatch, ...] = ()
    if config.corrections:
        t = time.perf_counter()
        corrections = lookup_corrections(store, query, scope)
        timing["corr"] = _ms_since(t)
    cue = None
    if time_cue is not None:
        t = time.perf_counter()
        cue = run_cue(store, time_cue, scope=scope, terms=ctx.terms, vector=ctx.query_vector,
                      now_ms=now, include_superseded=include_superseded, started=start,
                      limit_ms=cue_time_limit_ms)  # fmt: skip
        timing["cue"] = _ms_since(t)
    stale = judge.marks([h.memory.id for h in hits])  # the pool's, read by the scoring
    timing["total"] = _ms_since(start)
    return RecallResult(
        query=query,
        strategy=config.name,
        scope=scope,
        hits=hits,
        lanes_run=tuple(lane.name for lane in lanes),
        candidates=len(ranking.fused),
        timing_ms=timing,
        decisions=ranking.decisions,
        plan=plan,
        corrections=corrections,
        confidence=assessed.confidence,
        turn=assessed.turn,
        kw_ceiling=assessed.ceiling,
        shared=MappingProxyType(assessed.shared),
        cue=cue,
        bounded=MappingProxyType(dict(ctx.notes)),
        newer=MappingProxyType(newer),
        stale=MappingProxyType(stale),
        tuning=tuning,
    )


@dataclass(frozen=True, slots=True)
class Gathered:
    """What the lanes found: each lane's ranking in the configured order, the context the
    lanes ran in (with the query vector once embedded), and the whole query's vector (for
    the maximum relevance; None when no lane reads a vector)."""

    ctx: LaneContext
    rankings: dict[str, list[tuple[str, float]]]
    whole: np.ndarray | None


def _gather(
    embedder: Embedder,
    plan: QueryPlan,
    lanes: list[Lane],
    config: RecallConfig,
    ctx: LaneContext,
    timing: dict[str, float],
    scoring: ScoringConfig,
) -> Gathered:
    """Gather: the lanes that search from the query, then the derived lanes, which start
    from what the first ones found, in the order the scoring stage (``scoring``) would give
    them by their own factors."""
    # The query is embedded on another thread while the lanes that read no vector run:
    # onnxruntime and SQLite both release the GIL, so the two overlap.
    embedding = None
    if any(lane.name in NEEDS_VECTOR for lane in lanes):
        embedding = _EMBEDDER_THREADS.submit(_embed, embedder, plan, timing)
    first = [lane for lane in lanes if not lane.derived]
    rankings = _run_lanes([lane for lane in first if lane.name not in NEEDS_VECTOR], ctx, timing)
    whole = None  # the whole query's vector, for the maximum relevance
    if embedding is not None:
        vector, whole = embedding.result()
        ctx = replace(ctx, query_vector=vector)
        rankings |= _run_lanes([lane for lane in first if lane.name in NEEDS_VECTOR], ctx, timing)
    rankings = {lane.name: rankings[lane.name] for lane in first}  # the configured order
    derived = [lane for lane in lanes if lane.derived]
    if derived:
        t = time.perf_counter()
        seeded = ctx.with_seeds(seeds_of(config, rankings, ctx, scoring))
        timing["seeds"] = _ms_since(t)  # the first fusion and the seeds' rows, loaded once
        rankings |= _run_lanes(derived, seeded, timing)
    return Gathered(ctx, rankings, whole)


def seeds_of(
    config: RecallConfig,
    rankings: dict[str, list[tuple[str, float]]],
    ctx: LaneContext,
    scoring: ScoringConfig = DEFAULT_SCORING,
) -> list[str]:
    """The seeds the derived lanes work outward from: the first lanes' ``rankings`` fused,
    in scope (``xr``'s alone are not), the best ``ctx.depth``, in the order the scoring stage
    would give them by their own factors (:func:`by_own_factors`; the fused order with the
    stage off)."""
    found = [f for f in fuse_lanes(config, rankings, ctx) if set(f.lanes) - OUTSIDE_SCOPE]
    seeds = found[: ctx.depth]
    if config.scoring:
        now = int(time.time() * 1000) if ctx.now is None else ctx.now
        seeds = by_own_factors(seeds, ctx.memories([f.id for f in seeds]), now, scoring)
    return [f.id for f in seeds]


@dataclass(frozen=True, slots=True)
class Ranking:
    """The lanes' rankings fused, and what the rank stage made of every candidate: the hits
    it admitted, best first, and one decision per fused candidate."""

    fused: list[Fused]
    hits: tuple[Hit, ...]
    decisions: tuple[Decision, ...]


def _rank(
    gathered: Gathered,
    config: RecallConfig,
    limit: int,
    scoring: ScoringConfig,
    include_superseded: bool,
    now_ms: int,
    timing: dict[str, float],
    stale: Judge | None = None,
) -> Ranking:
    """Rank: fuse the lanes' rankings, then score, inhibit and cut them (recall/rank.py)."""
    ctx = gathered.ctx
    t = time.perf_counter()
    fused = fuse_lanes(config, gathered.rankings, ctx)
    timing["fuse"] = _ms_since(t)
    ranked = rank(ctx.store, fused, limit=limit, config=config, scoring=scoring,
                  include_superseded=include_superseded, now_ms=now_ms, timing=timing,
                  load=ctx.memories, stale=stale)  # fmt: skip
    hits = tuple(
        Hit(memory=r.memory, score=r.fused.score, lanes=dict(r.fused.lanes), final=r.final,
            factors=r.factors)
        for r in ranked
        if r.outcome == "admitted" and r.memory is not None
    )  # fmt: skip
    decisions = tuple(
        Decision(r.fused.id, r.fused.score, r.fused.lanes, r.outcome, r.final, r.factors)
        for r in ranked
    )  # fmt: skip
    return Ranking(fused, hits, decisions)


@dataclass(frozen=True, slots=True)
class Assessment:
    """What the assessment stage says of a ranked recall (RecallResult's fields of the same
    meaning: ``confidence``, ``turn``, ``shared``, ``kw_ceiling``)."""

    confidence: Confidence | None
    turn: Turn
    shared: dict[str, tuple[str, ...]]
    ceiling: float | None
    #: The vectors read: the first candidates' and, when knowledge updates are looked for,
    #: the hits'.
    vectors: Mapping[str, np.ndarray]


def _assess(
    gathered: Gathered,
    ranking: Ranking,
    stats: TermStats,
    config: RecallConfig,
    calibration: Calibration,
) -> Assessment:
    """Assess: what confidence and the admission gate need, read of the store in one call
    (:meth:`Store.assessment_reads`): the first candidates' vectors for the maximum
    relevance, the turn's distinctive words each hit holds, and the keyword statistics."""
    ctx, whole, hits = gathered.ctx, gathered.whole, ranking.hits
    realm = ctx.scope.realm
    turn = read_turn(ctx.query, lambda w: stats.df(realm, w), stats.size(realm),
                     config.common_fraction)  # fmt: skip
    kw = "kw" in gathered.rankings  # only a keyword lane's scores are put on the 0-100 scale
    relevant = [] if whole is None else _relevance_ids(ctx, ranking.fused)
    wanted = set(relevant)
    # The knowledge-update stage compares the hits' vectors: read with the others, once.
    extra = [h.memory.id for h in hits if h.memory.id not in wanted] if config.updates else []
    reads = ctx.store.assessment_reads(AssessmentRequest(
        realm,
        vectors=[*relevant, *extra],
        # The words as the keyword lane matches them (stems, accents folded), for the gate.
        terms=turn.distinctive,
        holders=[h.memory.id for h in hits],
        # With the statistics the lane scored by: the realm's (store/sqlite/keywords.py).
        frequencies=ctx.terms if kw else None,
    ))  # fmt: skip
    held = reads.matches
    shared = {h.memory.id: tuple(w for w in turn.distinctive if w in held.get(h.memory.id, ()))
              for h in hits}  # fmt: skip
    sure = None
    if whole is not None:
        vectors = [reads.vectors[i] for i in relevant if i in reads.vectors]
        # The realm's size: the same cosine means more in a store of a few memories; and
        # the words: how much of the question the first hits hold.
        words = [shared[h.memory.id] for h in hits]
        sure = confidence(max_relevance(whole, vectors), calibration, stats.size(realm),
                          found_share(turn.distinctive, words),
                          words_held(turn.distinctive, words))  # fmt: skip
    ceiling = None
    if kw:
        ceiling = bm25_ceiling(ctx.terms, lambda w: reads.df.get(w, 0), reads.size or 0)
    return Assessment(sure, turn, shared, ceiling, reads.vectors)


#: Where queries are embedded, beside the recall's own thread (see recall()).
_EMBEDDER_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="chitta-embed")


def _embed(
    embedder: Embedder, plan: QueryPlan, timing: dict[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """The vector the lanes search with (the distinctive text) and the whole query's, in
    one call when they differ."""
    t = time.perf_counter()
    texts = [plan.embed_text] if plan.embed_text == plan.text else [plan.embed_text, plan.text]
    vectors = embedder.embed(texts).vectors
    timing["embed"] = _ms_since(t)
    return vectors[0], vectors[-1]


def _relevance_ids(ctx: LaneContext, fused: list[Fused]) -> list[str]:
    """The memories the maximum relevance is taken over: the first :data:`MAXREL_DEPTH`
    fused candidates that are live and in scope. A fixed depth, so that the value (and its
    calibration) does not depend on the limit asked for or the reranker; in scope, so that
    another realm's memories (the ``xr`` lane) cannot make this one look knowing. Read
    through the recall's load-once cache, which the rank stage has filled."""
    ids = [f.id for f in fused[:MAXREL_DEPTH]]
    live = ctx.memories(ids)
    return [i for i in ids if i in live and in_scope(live[i], ctx.scope)]


def _run_lanes(
    lanes: list[Lane], ctx: LaneContext, timing: dict[str, float]
) -> dict[str, list[tuple[str, float]]]:
    rankings = {}
    for lane in lanes:
        t = time.perf_counter()
        rankings[lane.name] = lane.run(ctx)
        timing[lane.name] = _ms_since(t)
    return rankings


def fuse_lanes(config: RecallConfig, rankings: dict, ctx: LaneContext) -> list[Fused]:
    """The lanes' rankings fused by the config's mode. Under rsf with the scoring stage off,
    seed 001's confidence factor is applied (it reads every candidate); with it on, the
    scoring stage's own confidence factor weighs the pool (recall/scoring.py), and counting
    confidence twice would only cost the load of every candidate."""
    if config.fusion == "rsf":
        confidence = None
        if not config.scoring:
            ids = list(dict.fromkeys(mid for ranking in rankings.values() for mid, _ in ranking))
            confidence = {mid: m.confidence.mu for mid, m in ctx.memories(ids).items()}
        return rsf(rankings, weights=config.rsf_weights(), boosts=config.rsf_boosts,
                   confidence=confidence, min_span=config.rsf_min_span)  # fmt: skip
    return rrf(rankings, k=config.rrf_k, weights=config.lane_weights)


def _ms_since(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 3)
