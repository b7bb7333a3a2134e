"""The recall trace, version 1 (seed 002 §1.1–1.2): which rows each stage kept, dropped and
reordered, and why.

Built on request (``recall(trace=True)``) from the finished :class:`RecallResult` — its
decisions hold every fused candidate with each lane's rank, raw score and contribution, its
outcome and factors — so a trace costs nothing when it is not asked for and changes nothing
when it is. It carries references (memory ids), ranks, scores, reasons and timings only,
never stored text and never the query: a caller holding the query recovers the coverage
ledger's parts from their spans (recall/confidence/coverage.py).

The seed's fields, in chitta's terms: the *arms* are chitta's lanes; the *gate* is the
admission gate (recall/confidence/gate.py) as the hook's hybrid lane applies it to the
returned rows, with the calibrated maximum relevance as its signal; chitta has no autocut
(recorded as not enabled); the count cut is the limit, after the scoring stage and lateral
inhibition.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chitta.config import DEFAULT_REALM
from chitta.recall.confidence.calibration import Calibration
from chitta.recall.confidence.coverage import safe_ledger
from chitta.recall.confidence.gate import GateSettings, GateView, normalised_bm25, relaxed, row_lane
from chitta.recall.timecue.cue import POLICY as CUED

if TYPE_CHECKING:
    from chitta.recall.result import RecallResult

TRACE_VERSION = 1
#: The recall-process policy without a time cue (seed 002 §1.2).
SINGLE_PASS = "single-pass-v0"
#: The outcomes of recall/rank.py that drop a candidate before the count cut (filters).
FILTERED = frozenset({"superseded", "missing"})
#: The outcomes of candidates the count cut (or the reranker's cut) left out.
COUNT_CUT = frozenset({"inhibited", "cut", "reranked"})
#: Digits kept of scores in a trace.
DIGITS = 6


def build_trace(
    result: RecallResult,
    *,
    request: Mapping[str, Any],
    config: Mapping[str, Any],
    calibration: Calibration,
    gate: GateSettings,
    server_version: str,
    scoring_version: str,
) -> dict[str, Any]:
    """The trace v1 record of a finished recall (references, ranks, scores, reasons only)."""
    start = time.perf_counter()
    coverage, coverage_ms = safe_ledger(
        result.query, [(h.memory.id, h.memory.content) for h in result.hits]
    )
    scope = result.scope
    trace: dict[str, Any] = {
        "trace_version": TRACE_VERSION,
        "policy": {
            "scoring": scoring_version,
            "process": SINGLE_PASS if result.cue is None else CUED,
            # The resonance learner's values, when it set any (learn/learner.py).
            "learner": None if result.tuning is None else result.tuning.as_dict(),
        },
        "server_version": server_version,
        "scope": {"realm": scope.realm, "agent_id": scope.agent_id, "channel": scope.channel},
        "request": dict(request),
        "config": dict(config),
        "arms": arms(result),
        "fusion": [
            {
                "ref": d.id,
                "score": _r(d.score),
                "contributions": {lane: _r(h.contribution) for lane, h in d.lanes.items()},
            }
            for d in result.decisions
        ],  # fmt: skip
        "scoring": [
            {"ref": d.id, "final": _r(d.final), "factors": {k: _r(v) for k, v in d.factors.items()}}
            for d in result.decisions
            if d.final is not None
        ],
        "gate": gate_record(
            result,
            calibration,
            gate,
            strategy=str(request.get("strategy")),
            limit=int(request.get("limit") or len(result.hits)),
        ),
        "autocut": {"enabled": False, "fired": False},
        "order": order_record(result),
        "reservation": reservation(result),
        "stages": stages(result),
        "suspected": suspected(result),
        "coverage": coverage,
    }
    if result.cue is not None:  # seed 002 §2.7, §2.8: what the cue did, and if it was not used
        trace["time_cue"] = result.cue.report.as_dict()
        if result.cue.plan.ignored is not None:
            trace["cue_ignored"] = {"reason": result.cue.plan.ignored,
                                    "period": _period(result.cue.plan.period)}  # fmt: skip
    timing = dict(result.timing_ms)
    timing["coverage"] = coverage_ms
    timing["trace"] = round((time.perf_counter() - start) * 1000, 3)
    trace["timing_ms"] = timing
    return trace


def arms(result: RecallResult) -> dict[str, list[dict[str, Any]]]:
    """Per lane that ran: ``{ref, rank, raw}`` of every candidate it returned, best first."""
    out: dict[str, list[dict[str, Any]]] = {lane: [] for lane in result.lanes_run}
    for d in result.decisions:
        for lane, hit in d.lanes.items():
            out.setdefault(lane, []).append({"ref": d.id, "rank": hit.rank, "raw": _r(hit.raw)})
    for rows in out.values():
        rows.sort(key=lambda row: row["rank"])
    if result.cue is not None and result.cue.used:  # the cue arm: its last search's ranking
        out["cue"] = [{"ref": i, "rank": n, "raw": _r(raw)}
                      for n, (i, raw) in enumerate(result.cue.searches[-1].ranking, 1)]  # fmt: skip
    return out


def gate_record(
    result: RecallResult, fit: Calibration, settings: GateSettings, *, strategy: str, limit: int
) -> dict[str, Any]:
    """The gate: its signal and threshold, and one decision per candidate. A candidate the
    store filtered (superseded, missing) is dropped with that reason; a returned row is judged
    as the MCP gateway judges it (recall/confidence/gate.py: by strategy, ``xr`` from another
    realm, with the small-realm relaxation); rows past the count cut never reached the gate."""
    conf = result.confidence
    seated = set(result.cue.seated) if result.cue is not None else set()
    page = sum(1 for h in result.hits if h.memory.id not in seated)
    relax = conf is not None and relaxed(result.scope.realm, DEFAULT_REALM, page, limit,
                                         conf.raw, settings)  # fmt: skip
    view = GateView(settings, result.turn, conf.band if conf else None,
                    conf.calibrated if conf else None, relax=relax)  # fmt: skip
    returned = {h.memory.id: h for h in result.hits}
    decisions = []
    judged: set[str] = set()
    for d in result.decisions:
        if d.outcome in FILTERED:
            decisions.append({"ref": d.id, "decision": "dropped", "reason": d.outcome})
        elif d.id in returned:
            decisions.append(_judge(view, result, returned[d.id], strategy))
            judged.add(d.id)
    for i, hit in returned.items():  # a cue seat no lane reached is judged like the others
        if i not in judged:
            decisions.append(_judge(view, result, hit, strategy))
    return {
        "signal": None if conf is None else _r(conf.band_value),
        "raw": None if conf is None else _r(conf.raw),
        "found": None if conf is None else _r(conf.found),
        "held": None if conf is None else conf.held,
        "threshold": fit.threshold,
        "origin": "default" if fit.is_default else "calibrated",
        "calibration": fit.source,
        "band": None if conf is None else conf.band,
        "silence": settings.silence,
        "relaxed": relax,
        "pool": sum(1 for d in result.decisions if d.final is not None),
        "decisions": decisions,
    }


def order_record(result: RecallResult) -> dict[str, Any]:
    """The final order before the count cut (the ranked pool, best first; the reranked
    order when the reranker ran) and the refs the count cut dropped. With a time cue,
    ``returned`` is the answer after the move, seats last; ``before_cut`` and ``cut`` are
    the count's (a seat the count had cut is in ``cut`` and in the trace's reservation)."""
    returned = [h.memory.id for h in result.hits]
    counted = list(result.cue.counted) if result.cue and result.cue.applied else returned
    rest = [d.id for d in result.decisions if d.final is not None and d.id not in set(counted)]
    cut = [d.id for d in result.decisions
           if d.outcome in COUNT_CUT | {"seated"} and d.final is not None]  # fmt: skip
    return {"before_cut": counted + rest, "returned": returned, "cut": cut}


def reservation(result: RecallResult) -> list[dict[str, Any]]:
    """The rows admitted by a held seat: the time cue's (seed 002 §2.4), in cue-arm order,
    each with its cue rank and what became of it before (``was``: its outcome, or ``None``
    when no lane reached it)."""
    run = result.cue
    if run is None or not run.applied:
        return []
    ranks = run.ranks
    return [{"ref": i, "signal": "cue", "cue_rank": ranks[i], "was": was}
            for i, was in zip(run.seated, run.seat_was, strict=True)]  # fmt: skip


def stages(result: RecallResult) -> list[dict[str, Any]]:
    """One entry per stage of the loop: v0 without a cue is one pass (and the reranker);
    with one, the cue arm's search and, when it found nothing, its revision (§2.5)."""
    # Without a cue there is no second stage to start: ``next`` is None.
    run = result.cue
    first: dict[str, Any] = {"stage": "single-pass", "searched": list(result.lanes_run),
                             "next": None}  # fmt: skip
    out = [first]
    if run is not None and run.used:
        first |= {"next": "cue", "why": "a time cue was given"}
        for n, search in enumerate(run.searches):
            entry: dict[str, Any] = {
                "stage": "cue" if n == 0 else "cue-revision",
                "searched": {"arm": "cue", "confidence": search.stage.confidence,
                             "period": _period(search.stage.period), "bound": search.stage.bound},
                "found": len(search.ranking), "vector": search.vector, "keyword": search.keyword,
                "next": None,
            }  # fmt: skip
            if n + 1 < len(run.searches):
                entry |= {
                    "next": "cue-revision",
                    "why": "the period held nothing: widened by one confidence step",
                }
            elif not search.ranking and run.stopped is not None:
                entry["stopped"] = run.stopped
            out.append(entry)
    elif run is not None:
        first["cue"] = "ignored" if run.plan.ignored else "no period: the scope holds nothing"
    if result.rerank is not None:
        out.append({"stage": "rerank", "applied": result.rerank.applied,
                    "fallback": _failure_kind(result.rerank.fallback)})  # fmt: skip
    return out


def suspected(result: RecallResult) -> list[dict[str, Any]]:
    """What the pass can see went wrong without knowing the answer: no arm found anything,
    or the time cue's period held nothing (with what the loop did about it)."""
    out: list[dict[str, Any]] = []
    if not result.decisions:
        out.append({"code": "CANDIDATE_MISS", "stage": "single-pass",
                    "symptom": "no lane found a candidate", "action": "none"})  # fmt: skip
    searches = result.cue.searches if result.cue is not None else ()
    stopped = result.cue.stopped if result.cue is not None else None
    for n, search in enumerate(searches):
        if search.ranking:
            continue
        last = n + 1 == len(searches)
        action = "widened" if not last else f"stopped: {stopped or 'no further stage'}"
        out.append({"code": "CANDIDATE_MISS", "stage": "cue" if n == 0 else "cue-revision",
                    "symptom": "the time cue's period held no candidate",
                    "action": action})  # fmt: skip
    return out


def _period(period: Any) -> dict[str, Any] | None:
    return None if period is None else period.as_dict()


def _judge(view: GateView, result: RecallResult, hit: Any, strategy: str) -> dict[str, Any]:
    lane = row_lane(hit.memory.realm, result.scope.realm, strategy)
    row = {"shared": result.shared.get(hit.memory.id, ()),
           "kw_norm": _kw_norm(result, hit.memory.id)}  # fmt: skip
    verdict = view.verdict(lane, row)
    decision = "admitted" if verdict.admitted else "dropped"
    return {"ref": hit.memory.id, "lane": lane, "decision": decision, "reason": verdict.reason}


def _kw_norm(result: RecallResult, memory_id: str) -> float | None:
    hit = next((h for h in result.hits if h.memory.id == memory_id), None)
    if hit is None or "kw" not in hit.lanes or result.kw_ceiling is None:
        return None
    return normalised_bm25(hit.lanes["kw"].raw, result.kw_ceiling)


def _failure_kind(fallback: str | None) -> str | None:
    """A rerank fallback without its message (an exception's text is not the trace's to
    carry): ``scorer failed: ValueError: …`` becomes ``scorer failed: ValueError``."""
    if fallback is None:
        return None
    parts = fallback.split(": ")
    return ": ".join(parts[:2]) if fallback.startswith("scorer failed") else parts[0]


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)
