"""The reply shapes on the wire: one JSON form of each result, for the daemon's JSON-RPC
methods, the MCP tools, the CLI's ``--json`` and cited recall's chitta sources; and the way
back, from a reply to the result objects, for the Python API through the daemon (remote.py)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from chitta.code.stale import StaleLink
from chitta.errors import BadArgument
from chitta.provenance import Link, Provenance
from chitta.recall.confidence.calibration import NO_EVIDENCE, Confidence
from chitta.recall.confidence.coverage import safe_ledger
from chitta.recall.confidence.gate import Turn, normalised_bm25
from chitta.recall.fusion import LaneHit
from chitta.recall.lanes.corr import CorrectionMatch
from chitta.recall.reconstruct import Reconstruction
from chitta.recall.result import Decision, Hit, RecallResult
from chitta.store.confidence import Confidence as StoredConfidence
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Scope, Source
from chitta.transfer import memory_to_dict
from chitta.validate import format_time, parse_time

if TYPE_CHECKING:
    from chitta.api import Remembered


def result_to_dict(result: RecallResult) -> dict[str, Any]:
    """The JSON shape of a recall: hits with their lanes, ranks, raw scores and shares.

    With a time cue that searched, each hit also carries ``match_reason`` (its ``cue_rank``;
    a seat's ``signal`` and ``admission`` too) and the reply a ``time_cue`` block
    (docs/time-cue.md); without a cue the shape is unchanged. A hit that a newer memory on
    the same subject may have outdated carries ``newer``, that memory's id (recall/updates.py);
    one linked to a symbol whose code changed since carries ``possibly_stale``, the changed
    symbols with their commit ranges (code/stale.py)."""
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
        if (newer := result.newer.get(hit.memory.id)) is not None:
            hits[-1]["newer"] = newer  # it may be outdated (recall/updates.py)
        if stale := result.stale.get(hit.memory.id):  # code it names changed (code/stale.py)
            hits[-1]["possibly_stale"] = [link.as_dict() for link in stale]
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
    if result.cue is not None:  # only with a time cue (recall/timecue/apply.py)
        out["time_cue"] = result.cue.report.as_dict()
    if result.bounded:  # only when a bound cut a lane's work (recall/lanes/graph.py)
        out["bounded"] = dict(result.bounded)
    if result.unembedded:  # only while some wait for their vectors (subconscious/embedding.py)
        out["unembedded"] = result.unembedded
    if result.trace is not None:  # only when asked for: without it the reply is unchanged
        out["trace"] = dict(result.trace)
    return out


def reconstruction_to_dict(rec: Reconstruction) -> dict[str, Any]:
    """The JSON shape of a reconstruct: its items and, when the recall was traced, a trace
    whose ``recall`` is the recall's and whose ``coverage`` is over the records cited."""
    out = rec.as_dict()
    result = rec.recall
    # What the admission gate needs of each item, as a recall's hits carry it
    # (recall/confidence/gate.py).
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


def provenance_to_dict(chain: Provenance) -> dict[str, Any]:
    """A memory's provenance chain (chitta/provenance.py) as ``provenance`` replies it."""
    memory = chain.memory

    def brief(link: Link | None) -> dict[str, Any] | None:
        if link is None:
            return None
        return {"id": link.id, "kind": link.kind, "role": link.role, "session": link.session,
                "at": format_time(link.at), "excerpt": link.excerpt,
                "forgotten": link.forgotten}  # fmt: skip

    return {
        "id": memory.id, "kind": str(memory.kind), "realm": memory.realm,
        "created_at": format_time(memory.created_at), "source": memory.source.as_dict(),
        "source_kind": chain.source_kind, "source_name": chain.source_name,
        "trust": round(chain.trust, 4), "via": memory.source.via,
        "turns": [brief(t) for t in chain.turns], "missing_turns": list(chain.missing_turns),
        "replications": [{"source": key, "at": format_time(at)}
                         for key, at in chain.replications],
        "independent_sources": chain.independent_sources,
        "supersedes": brief(chain.supersedes), "superseded_by": brief(chain.superseded_by),
        "replaced": [brief(r) for r in chain.replaced],
        "symbols": [{"qualified": q, "path": path, "changed": changed}
                    for q, path, changed in chain.symbols],
    }  # fmt: skip


def remembered_to_dict(done: Remembered) -> dict[str, Any]:
    """What ``remember`` did, as its reply says it."""
    return {"id": done.id, "deduplicated": done.deduplicated, "similarity": done.similarity,
            "burst": done.burst, "truncated": done.truncated,
            "supersedes": done.supersedes, "embedded": done.embedded,
            "distilled": list(done.distilled)}  # fmt: skip


# --- back from the wire: the dict -> object inverses (the Python API through the daemon) ------


def memory_from_reply(data: Mapping[str, Any]) -> Memory:
    """The memory a reply carries (:func:`memory_reply`'s inverse, exact: times go through
    the export's ISO 8601 form, which is exact for millisecond timestamps). Keys that are not
    a memory's (a hit's rank, lanes, ``ok``) are ignored."""
    c = data["confidence"]
    return Memory(
        id=data["id"],
        kind=Kind(data["kind"]),
        content=data["content"],
        realm=data["realm"],
        agent_id=data["agent_id"],
        channel=data["channel"],
        tags=tuple(data["tags"]),
        source=Source.from_dict(data["source"]),
        created_at=_ms(data["created_at"]),
        updated_at=_ms(data["updated_at"]),
        event_time=parse_time(data["event_time"]),
        confidence=StoredConfidence(mu=c["mu"], sigma_sq=c["sigma_sq"], n=c["n"], tau=c["tau"]),
        strength=data["strength"],
        tier=data["tier"],
        access_count=data["access_count"],
        last_accessed=parse_time(data["last_accessed"]),
        decayed_at=parse_time(data["decayed_at"]),
        supersedes=data["supersedes"],
        superseded_by=data["superseded_by"],
        episode_id=data["episode_id"],
        truncated=data["truncated"],
        deleted_at=parse_time(data["deleted_at"]),
    )


def _ms(text: str) -> int:
    ms = parse_time(text)
    if ms is None:
        raise BadArgument("a memory's created_at and updated_at are required")
    return ms


def confidence_from_dict(data: Mapping[str, Any] | None) -> Confidence | None:
    """A recall's confidence as its reply says it. The wire carries the shown chance as a
    whole percentage, so ``shown`` is that percentage over 100 (``percent`` and ``words()``
    come out the same) and ``calibrated`` and ``raw`` are rounded to 4 places."""
    if data is None:
        return None
    return Confidence(raw=data["raw"], calibrated=data["calibrated"], shown=data["percent"] / 100,
                      band=data["band"], source=data["calibration"],
                      found=data.get("found", NO_EVIDENCE), held=data.get("held", 0))  # fmt: skip


def result_from_dict(data: Mapping[str, Any]) -> RecallResult:
    """A recall rebuilt from :func:`result_to_dict`'s shape: its hits (memories, lanes, fused
    and final scores, factors, as rounded on the wire), corrections, confidence, scope, the
    gate's turn and shared words, timings, trace and bounds. ``decisions`` hold only the
    outcomes of the dropped candidates (the wire counts them, it does not list them), so that
    ``dropped`` counts the same. Not carried: the query plan, the reranker's and the time
    cue's own records (their reply blocks stay in the dict) and the BM25 ceiling."""
    hits, shared, newer, stale = [], {}, {}, {}
    for h in data["hits"]:
        lanes = {name: LaneHit(rank=v["rank"], raw=v["raw"], contribution=v["contribution"])
                 for name, v in h["lanes"].items()}  # fmt: skip
        factors = MappingProxyType(dict(h["factors"]))
        hits.append(Hit(memory=memory_from_reply(h), score=h["score"], lanes=lanes,
                        final=h["final"], factors=factors))  # fmt: skip
        if "shared" in h:
            shared[h["id"]] = tuple(h["shared"])
        if "newer" in h:
            newer[h["id"]] = h["newer"]
        if h.get("possibly_stale"):
            stale[h["id"]] = tuple(StaleLink.from_dict(d) for d in h["possibly_stale"])
    dropped = tuple(
        Decision(id="", score=0.0, lanes=MappingProxyType({}), outcome=cause)
        for cause, count in data["dropped"].items()
        for _ in range(count)
    )
    corrections = tuple(
        CorrectionMatch(memory=memory_from_reply(c), keys=tuple(c["keys"]))
        for c in data["corrections"]
    )
    s, turn = data["scope"], data.get("turn")
    return RecallResult(
        query=data["query"],
        strategy=data["strategy"],
        scope=Scope(realm=s["realm"], agent_id=s["agent_id"], channel=s["channel"]),
        hits=tuple(hits),
        lanes_run=tuple(data["lanes_run"]),
        candidates=data["candidates"],
        timing_ms=dict(data["timing_ms"]),
        decisions=dropped,
        corrections=corrections,
        confidence=confidence_from_dict(data["confidence"]),
        turn=None if turn is None else Turn(tuple(turn["distinctive"]), turn["terse_negation"]),
        shared=MappingProxyType(shared),
        trace=data.get("trace"),
        bounded=MappingProxyType(dict(data.get("bounded") or {})),
        newer=MappingProxyType(newer),
        stale=MappingProxyType(stale),
        unembedded=int(data.get("unembedded", 0)),
    )


def remembered_from_dict(data: Mapping[str, Any]) -> Remembered:
    """What ``remember`` did, from its reply (:func:`remembered_to_dict`'s inverse)."""
    from chitta.api import Remembered

    return Remembered(id=data["id"], deduplicated=data["deduplicated"],
                      similarity=data["similarity"], burst=bool(data.get("burst", False)),
                      truncated=data["truncated"], supersedes=data["supersedes"],
                      embedded=bool(data.get("embedded", True)),
                      distilled=tuple(data.get("distilled", ())))  # fmt: skip
