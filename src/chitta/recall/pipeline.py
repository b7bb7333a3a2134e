"""The recall pipeline: run the configured lanes over a scope, fuse, score, cut (rank.py)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from chitta.embed.base import Embedder
from chitta.errors import BadArgument
from chitta.recall.calibration import DEFAULT as DEFAULT_CALIBRATION
from chitta.recall.calibration import Calibration, Confidence, confidence, max_relevance
from chitta.recall.config import MAX_LIMIT, RecallConfig
from chitta.recall.cue_arm import CueRun, run_cue
from chitta.recall.fusion import RSF_BOOSTS, Fused, LaneHit, rrf, rsf
from chitta.recall.gate import Turn, bm25_ceiling, read_turn
from chitta.recall.lanes import LANES, NEEDS_VECTOR, OUTSIDE_SCOPE, Lane, LaneContext
from chitta.recall.lanes.base import in_scope
from chitta.recall.lanes.corr import CorrectionMatch, lookup_corrections
from chitta.recall.query import QueryPlan, plan_query
from chitta.recall.rank import rank
from chitta.recall.rerank import RerankInfo
from chitta.recall.scoring_config import DEFAULT as DEFAULT_SCORING
from chitta.recall.scoring_config import ScoringConfig
from chitta.recall.session import SessionView
from chitta.recall.time_cue import CUE_TIME_LIMIT_MS, TimeCue
from chitta.recall.updates import mark_updates
from chitta.store.base import Store
from chitta.store.records import Memory, Scope

_NO_FACTORS: Mapping[str, float] = MappingProxyType({})
#: How many fused candidates the maximum relevance is taken over (recall/calibration.py).
MAXREL_DEPTH = 40


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory, each lane that found it, its fused score (``score``: the sum of
    the lanes' contributions) and its final score after the scoring stage and inhibition."""

    memory: Memory
    score: float
    lanes: dict[str, LaneHit]
    final: float | None = None  # None: not ranked by the pipeline
    factors: Mapping[str, float] = field(default_factory=lambda: _NO_FACTORS)

    @property
    def reason(self) -> str:
        """Why it was admitted: the lanes that brought it, e.g. ``sem+kw``."""
        return "+".join(self.lanes)


@dataclass(frozen=True, slots=True)
class Decision:
    """What became of one fused candidate: ``admitted``, or the cause it was dropped."""

    id: str
    score: float  # fused
    lanes: Mapping[str, LaneHit]
    outcome: str  # admitted | superseded | missing | inhibited | cut (recall/rank.py)
    final: float | None = None  # after scoring and inhibition; None when not in the pool
    factors: Mapping[str, float] = field(default_factory=lambda: _NO_FACTORS)


@dataclass(frozen=True, slots=True)
class RecallResult:
    """A recall's ranked hits and how it was made (no stored text beyond the hits)."""

    query: str
    strategy: str
    scope: Scope
    hits: tuple[Hit, ...]
    lanes_run: tuple[str, ...]
    candidates: int
    timing_ms: dict[str, float]
    decisions: tuple[Decision, ...] = ()
    plan: QueryPlan | None = None  # which query words the lanes were given
    #: Corrections the query names (the keyed ``corr`` lookup): beside the hits, never cut.
    corrections: tuple[CorrectionMatch, ...] = ()
    #: Does the store know anything about this? (recall/calibration.py; None: no query
    #: vector, as under the keyword strategy.)
    confidence: Confidence | None = None
    #: The query as the admission gate reads it (recall/gate.py).
    turn: Turn | None = None
    #: The most BM25 the keyword terms can reach, to normalise ``kw`` raw scores (gate.py).
    kw_ceiling: float | None = None
    #: Per hit, the turn's distinctive words it holds, matched as the keyword lane matches.
    shared: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    #: The trace v1 record (recall/trace.py), when the caller asked for one.
    trace: Mapping[str, Any] | None = None
    #: What the cross-encoder stage did (recall/rerank.py); None: no reranker configured.
    rerank: RerankInfo | None = None
    #: What the time cue did (recall/cue_arm.py, recall/cued.py); None: no cue was given.
    cue: CueRun | None = None
    #: Lanes whose work a bound cut (a hub's edges, the visit budget), with what cut it.
    bounded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Per older hit, the id of the newer memory on the same subject (recall/updates.py).
    newer: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def dropped(self) -> dict[str, int]:
        """Candidates not returned, counted by cause."""
        counts: dict[str, int] = {}
        for d in self.decisions:
            if d.outcome not in ("admitted", "seated"):  # seated: returned by a cue seat
                counts[d.outcome] = counts.get(d.outcome, 0) + 1
        return counts


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
) -> RecallResult:
    """The ``limit`` best memories in ``scope`` for ``query`` under ``config``.

    A memory another one supersedes is left out unless ``include_superseded``. ``session``
    is what the asking agent session did lately, for the ``ctx`` lane's priming. ``scoring``
    weighs the scoring stage; ``now_ms`` is the time its recency factor is taken at.
    ``calibration`` turns the maximum relevance into the result's ``confidence``.
    ``time_cue`` runs the cue arm beside the lanes (seed 002 §2; its revision only within
    ``cue_time_limit_ms`` of the start); it changes nothing here: what it does to the answer
    comes after the count (recall/cued.py).
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
    timing["plan"] = _ms_since(start)
    # The query is embedded on another thread while the lanes that read no vector run:
    # onnxruntime and SQLite both release the GIL, so the two overlap.
    embedding = None
    if any(lane.name in NEEDS_VECTOR for lane in lanes):
        embedding = _EMBEDDER_THREADS.submit(_embed, embedder, plan, timing)
    ctx = LaneContext(
        query, plan.terms, None, scope, config.depth(limit), store, common=plan.common,
        session=session.name if session else None,
        primed=session.primed if session else (), topics=session.topics if session else (),
    )  # fmt: skip
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
        # The derived lanes work outward from what the others found: fuse those first.
        found = [f for f in _fuse(config, rankings, ctx) if set(f.lanes) - OUTSIDE_SCOPE]
        seeded = ctx.with_seeds([f.id for f in found[: ctx.depth]])
        rankings |= _run_lanes(derived, seeded, timing)
    t = time.perf_counter()
    fused = _fuse(config, rankings, ctx)
    timing["fuse"] = _ms_since(t)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    ranked = rank(store, fused, limit=limit, config=config, scoring=scoring,
                  include_superseded=include_superseded, now_ms=now, timing=timing,
                  load=ctx.memories)  # fmt: skip
    hits = [
        Hit(memory=r.memory, score=r.fused.score, lanes=dict(r.fused.lanes), final=r.final,
            factors=r.factors)
        for r in ranked
        if r.outcome == "admitted" and r.memory is not None
    ]  # fmt: skip
    hits, newer = mark_updates(store, hits, config.newer_first) if config.updates else (hits, {})
    decisions = [
        Decision(r.fused.id, r.fused.score, r.fused.lanes, r.outcome, r.final, r.factors)
        for r in ranked
    ]  # fmt: skip
    t = time.perf_counter()
    sure = None if whole is None else confidence(_max_relevance(ctx, fused, whole), calibration)
    turn = read_turn(query, lambda w: stats.df(scope.realm, w), stats.size(scope.realm),
                     config.common_fraction)  # fmt: skip
    # The words as the keyword lane matches them (stems, accents folded), for the gate.
    matched = store.term_matches(turn.distinctive, [h.memory.id for h in hits])
    shared = {h.memory.id: tuple(w for w in turn.distinctive
                                 if w in matched.get(h.memory.id, ())) for h in hits}  # fmt: skip
    ceiling = None
    if "kw" in rankings:  # only a keyword lane's scores are put on the 0-100 scale
        # With the statistics the lane scored by: the realm's (store/sqlite/keywords.py).
        n, df = store.keyword_frequencies(ctx.terms, scope.realm)
        ceiling = bm25_ceiling(ctx.terms, lambda w: df.get(w, 0), n)
    timing["confidence"] = _ms_since(t)
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
    timing["total"] = _ms_since(start)
    return RecallResult(
        query=query,
        strategy=config.name,
        scope=scope,
        hits=tuple(hits),
        lanes_run=tuple(lane.name for lane in lanes),
        candidates=len(fused),
        timing_ms=timing,
        decisions=tuple(decisions),
        plan=plan,
        corrections=corrections,
        confidence=sure,
        turn=turn,
        kw_ceiling=ceiling,
        shared=MappingProxyType(shared),
        cue=cue,
        bounded=MappingProxyType(dict(ctx.notes)),
        newer=MappingProxyType(newer),
    )


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


def _max_relevance(ctx: LaneContext, fused: list[Fused], query: np.ndarray) -> float:
    """The maximum relevance: the best cosine of the whole query over the first
    :data:`MAXREL_DEPTH` fused candidates that are live and in scope. A fixed depth, so that
    the value (and its calibration) does not depend on the limit asked for or the reranker;
    in scope, so that another realm's memories (the ``xr`` lane) cannot make this one look
    knowing."""
    ids = [f.id for f in fused[:MAXREL_DEPTH]]
    live = ctx.memories(ids)
    ids = [i for i in ids if i in live and in_scope(live[i], ctx.scope)]
    vectors = ctx.store.vectors_for(ids)
    return max_relevance(query, [vectors[i] for i in ids if i in vectors])


def _run_lanes(
    lanes: list[Lane], ctx: LaneContext, timing: dict[str, float]
) -> dict[str, list[tuple[str, float]]]:
    rankings = {}
    for lane in lanes:
        t = time.perf_counter()
        rankings[lane.name] = lane.run(ctx)
        timing[lane.name] = _ms_since(t)
    return rankings


def _fuse(config: RecallConfig, rankings: dict, ctx: LaneContext) -> list[Fused]:
    """The lanes' rankings fused by the config's mode (rsf reads the candidates' confidence)."""
    if config.fusion == "rsf":
        ids = list(dict.fromkeys(mid for ranking in rankings.values() for mid, _ in ranking))
        confidence = {mid: m.confidence.mu for mid, m in ctx.memories(ids).items()}
        return rsf(rankings, weights=config.rsf_weights(), boosts=RSF_BOOSTS,
                   confidence=confidence)  # fmt: skip
    return rrf(rankings, k=config.rrf_k, weights=config.lane_weights)


def _ms_since(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 3)
