"""The recall trace, version 1 (seed 002 §1.1–1.2): which rows each stage kept, dropped and
reordered, and why.

Built on request (``recall(trace=True)``) from the finished :class:`RecallResult` — its
decisions hold every fused candidate with each lane's rank, raw score and contribution, its
outcome and factors — so a trace costs nothing when it is not asked for and changes nothing
when it is. It carries references (memory ids), ranks, scores, reasons and timings only,
never stored text and never the query: a caller holding the query recovers the coverage
ledger's parts from their spans (recall/coverage.py).

The seed's fields, in chitta's terms: the *arms* are chitta's lanes; the *gate* is the
admission gate (recall/gate.py) as the hook's hybrid lane applies it to the returned rows,
with the calibrated maximum relevance as its signal; chitta has no autocut (recorded as not
enabled); the count cut is the limit, after the scoring stage and lateral inhibition.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chitta.recall.calibration import Calibration
from chitta.recall.coverage import safe_ledger
from chitta.recall.gate import GateSettings, GateView, normalised_bm25

if TYPE_CHECKING:
    from chitta.recall.pipeline import RecallResult

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
        "policy": {"scoring": scoring_version, "process": SINGLE_PASS},
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
        "gate": gate_record(result, calibration, gate),
        "autocut": {"enabled": False, "fired": False},
        "order": order_record(result),
        "reservation": [],
        "stages": stages(result),
        "suspected": suspected(result),
        "coverage": coverage,
    }
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
    return out


def gate_record(result: RecallResult, fit: Calibration, settings: GateSettings) -> dict[str, Any]:
    """The gate: its signal and threshold, and one decision per candidate. A candidate the
    store filtered (superseded, missing) is dropped with that reason; a returned row is
    judged as the hook's hybrid lane judges it; the rest never reached the gate."""
    conf = result.confidence
    view = GateView(settings, result.turn, conf.band if conf else None,
                    conf.calibrated if conf else None)  # fmt: skip
    returned = {h.memory.id: h for h in result.hits}
    decisions = []
    for d in result.decisions:
        if d.outcome in FILTERED:
            decisions.append({"ref": d.id, "decision": "dropped", "reason": d.outcome})
        elif d.id in returned:
            row = {"shared": result.shared.get(d.id, ()), "kw_norm": _kw_norm(result, d.id)}
            verdict = view.verdict("hyb", row)
            decisions.append({"ref": d.id, "decision": "admitted" if verdict.admitted
                              else "dropped", "reason": verdict.reason})  # fmt: skip
    return {
        "signal": None if conf is None else _r(conf.calibrated),
        "raw": None if conf is None else _r(conf.raw),
        "threshold": fit.threshold,
        "origin": "default" if fit.is_default else "calibrated",
        "calibration": fit.source,
        "band": None if conf is None else conf.band,
        "silence": settings.silence,
        "pool": sum(1 for d in result.decisions if d.final is not None),
        "decisions": decisions,
    }


def order_record(result: RecallResult) -> dict[str, Any]:
    """The final order before the count cut (the ranked pool, best first; the reranked
    order when the reranker ran) and the refs the count cut dropped."""
    returned = [h.memory.id for h in result.hits]
    rest = [d.id for d in result.decisions if d.final is not None and d.id not in set(returned)]
    cut = [d.id for d in result.decisions if d.outcome in COUNT_CUT and d.final is not None]
    return {"before_cut": returned + rest, "returned": returned, "cut": cut}


def stages(result: RecallResult) -> list[dict[str, Any]]:
    """One entry per stage of the loop: v0 without a cue is one pass (and the reranker)."""
    # Without a cue there is no second stage to start: ``next`` is None.
    out: list[dict[str, Any]] = [
        {"stage": "single-pass", "searched": list(result.lanes_run), "next": None},
    ]
    if result.rerank is not None:
        out.append({"stage": "rerank", "applied": result.rerank.applied,
                    "fallback": result.rerank.fallback})  # fmt: skip
    return out


def suspected(result: RecallResult) -> list[dict[str, Any]]:
    """What the pass can see went wrong without knowing the answer: no arm found anything."""
    if result.decisions:
        return []
    return [{"code": "CANDIDATE_MISS", "stage": "single-pass",
             "symptom": "no lane found a candidate", "action": "none"}]  # fmt: skip


def _kw_norm(result: RecallResult, memory_id: str) -> float | None:
    hit = next((h for h in result.hits if h.memory.id == memory_id), None)
    if hit is None or "kw" not in hit.lanes or result.kw_ceiling is None:
        return None
    return normalised_bm25(hit.lanes["kw"].raw, result.kw_ceiling)


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)
