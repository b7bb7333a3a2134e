"""The reply shapes on the wire: one JSON form of each result, for the daemon's JSON-RPC
methods, the MCP tools, the CLI's ``--json`` and cited recall's chitta sources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.recall.coverage import safe_ledger
from chitta.recall.gate import normalised_bm25
from chitta.recall.pipeline import RecallResult
from chitta.recall.reconstruct import Reconstruction
from chitta.store.records import Memory
from chitta.transfer import memory_to_dict

if TYPE_CHECKING:
    from chitta.api import Remembered


def result_to_dict(result: RecallResult) -> dict[str, Any]:
    """The JSON shape of a recall: hits with their lanes, ranks, raw scores and shares.

    With a time cue that searched, each hit also carries ``match_reason`` (its ``cue_rank``;
    a seat's ``signal`` and ``admission`` too) and the reply a ``time_cue`` block
    (docs/time-cue.md); without a cue the shape is unchanged."""
    hits = []
    reasons = match_reasons(result)
    for rank, hit in enumerate(result.hits, start=1):
        memory = memory_to_dict(hit.memory)
        memory.pop("type")
        gate: dict[str, Any] = {}
        if result.turn is not None:
            gate["shared"] = list(result.shared.get(hit.memory.id, ()))
        if "kw" in hit.lanes and result.kw_ceiling is not None:
            gate["kw_norm"] = round(normalised_bm25(hit.lanes["kw"].raw, result.kw_ceiling), 1)
        hits.append(
            {
                "rank": rank,
                "score": round(hit.score, 6),  # fused: the sum of the lanes' contributions
                "final": None if hit.final is None else round(hit.final, 6),
                "factors": {name: round(v, 4) for name, v in hit.factors.items()},
                "reason": hit.reason,
                "lanes": {
                    name: {
                        "rank": h.rank,
                        "raw": round(h.raw, 6),
                        "contribution": round(h.contribution, 6),
                    }
                    for name, h in hit.lanes.items()
                },  # fmt: skip
                **gate,
                **memory,
            }
        )
        if reasons is not None:
            hits[-1]["match_reason"] = reasons[hit.memory.id]
            if "admission" in reasons[hit.memory.id]:
                hits[-1]["reason"] = "cue"  # a seat: admitted by the cue's reservation
    s = result.scope
    corrections = []
    for match in result.corrections:
        memory = memory_to_dict(match.memory)
        memory.pop("type")
        corrections.append({"keys": list(match.keys), **memory})
    out = {
        "query": result.query,
        "strategy": result.strategy,
        "scope": {"realm": s.realm, "agent_id": s.agent_id, "channel": s.channel},
        "lanes_run": list(result.lanes_run),
        "candidates": result.candidates,
        "dropped": result.dropped,
        "confidence": None if result.confidence is None else result.confidence.as_dict(),
        "turn": None
        if result.turn is None
        else {
            "distinctive": list(result.turn.distinctive),
            "terse_negation": result.turn.terse_negation,
        },  # fmt: skip
        "hits": hits,
        "corrections": corrections,
        "timing_ms": result.timing_ms,
    }
    if result.rerank is not None:  # only with a reranker configured (recall/rerank.py)
        out["rerank"] = result.rerank.as_dict()
    if result.cue is not None:  # only with a time cue (recall/cued.py)
        out["time_cue"] = result.cue.report.as_dict()
    if result.bounded:  # only when a bound cut a lane's work (recall/lanes/graph.py)
        out["bounded"] = dict(result.bounded)
    if result.trace is not None:  # only when asked for: without it the reply is unchanged
        out["trace"] = dict(result.trace)
    return out


def reconstruction_to_dict(rec: Reconstruction) -> dict[str, Any]:
    """The JSON shape of a reconstruct: its items and, when the recall was traced, a trace
    whose ``recall`` is the recall's and whose ``coverage`` is over the records cited."""
    out = rec.as_dict()
    result = rec.recall
    # What the admission gate needs of each item, as a recall's hits carry it (recall/gate.py).
    hits = {h.memory.id: h for h in result.hits}
    for item in out["items"]:
        hit = hits[item["ref"]]
        item["shared"] = list(result.shared.get(item["ref"], ()))
        if "kw" in hit.lanes and result.kw_ceiling is not None:
            item["kw_norm"] = round(normalised_bm25(hit.lanes["kw"].raw, result.kw_ceiling), 1)
    if result.turn is not None:
        out["turn"] = {"distinctive": list(result.turn.distinctive),
                       "terse_negation": result.turn.terse_negation}  # fmt: skip
    if rec.recall.cue is not None:  # only with a time cue, as recall says it (docs/time-cue.md)
        out["time_cue"] = rec.recall.cue.report.as_dict()
    if rec.recall.trace is not None:
        contents = {h.memory.id: h.memory.content for h in rec.recall.hits}
        coverage, ms = safe_ledger(
            rec.recall.query, [(item.ref, contents[item.ref]) for item in rec.items]
        )
        out["trace"] = {
            "recall": dict(rec.recall.trace),
            "coverage": coverage,
            "timing_ms": {"coverage": ms},
        }
    return out


def match_reasons(result: RecallResult) -> dict[str, dict[str, Any]] | None:
    """Per returned id, what the time cue says of it (seed 002 §2.4, §2.7): ``cue_rank`` for a
    row the cue arm ranked, ``signal`` and ``admission`` for a seat; ``None`` when no cue
    searched (then the hits carry no ``match_reason``)."""
    run = result.cue
    if run is None or not run.applied:
        return None
    ranks, seated = run.ranks, set(run.seated)
    out: dict[str, dict[str, Any]] = {}
    for hit in result.hits:
        i = hit.memory.id
        reason: dict[str, Any] = {}
        if i in seated:
            reason = {"signal": "cue", "admission": "reservation"}
        if i in ranks:
            reason["cue_rank"] = ranks[i]
        out[i] = reason
    return out


def memory_reply(memory: Memory) -> dict[str, Any]:
    """One memory as a reply carries it: its export fields without the record type."""
    out = memory_to_dict(memory)
    out.pop("type")
    return out


def remembered_to_dict(done: Remembered) -> dict[str, Any]:
    """What ``remember`` did, as its reply says it."""
    return {"id": done.id, "deduplicated": done.deduplicated, "similarity": done.similarity,
            "truncated": done.truncated, "supersedes": done.supersedes}  # fmt: skip
