"""Human-readable rendering for the CLI (rich tables, progress) and the JSON shapes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn
from rich.table import Table

from chitta.recall.coverage import safe_ledger
from chitta.recall.gate import normalised_bm25
from chitta.recall.pipeline import RecallResult
from chitta.recall.reconstruct import Reconstruction
from chitta.transfer import ImportReport, memory_to_dict

#: Files at least this large get a progress bar on import.
PROGRESS_MIN_BYTES = 1 << 20


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


def print_reconstruction(data: dict[str, Any]) -> None:
    """Render a reconstruct in its JSON shape: the band, then each item with its source."""
    console = Console()
    if conf := data.get("confidence"):
        console.print(conf["words"], markup=False, highlight=False)
    for number, item in enumerate(data["items"], start=1):
        when = f", {item['when'][:10]}" if item.get("when") else ""
        console.print(f"[{number}] {item['quote']}", markup=False, highlight=False)
        console.print(f"    — {item['kind']} {item['ref']} ({item['realm']}{when}; "
                      f"{item['reason']})", markup=False, highlight=False, style="dim")  # fmt: skip
    if not data["items"]:
        console.print("nothing recalled for that query")
    more = f"; {len(data['omitted'])} more left out" if data["omitted"] else ""
    console.print(f"[dim]{data['used']} of {data['budget']} characters{more}[/dim]")


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


def _lanes_text(hit: dict[str, Any]) -> str:
    # A cross-realm hit names the realm it came from: xr@<realm>.
    text = " ".join(
        f"{name}{'@' + hit['realm'] if name == 'xr' else ''}#{h['rank']}:{h['raw']:.2f}"
        for name, h in hit["lanes"].items()
    )
    reason = hit.get("match_reason") or {}
    if "cue_rank" in reason:  # a time cue ranked it; a seat says so
        seat = "seat " if "admission" in reason else ""
        text = f"{text} {seat}cue#{reason['cue_rank']}".strip()
    return text


def _clip(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"


def print_hits(data: dict[str, Any]) -> None:
    """Render a recall in its JSON shape (:func:`result_to_dict`, or the daemon's reply)."""
    console = Console()
    if conf := data.get("confidence"):
        console.print(conf["words"], markup=False, highlight=False)
    for c in data["corrections"]:
        console.print(f"correction {c['id']} (key {', '.join(c['keys'])}): {_clip(c['content'])}",
                      markup=False, highlight=False)  # fmt: skip
    if not data["hits"]:
        console.print(f"nothing found in realm {data['scope']['realm']!r} for that query")
        return
    table = Table(show_lines=False, pad_edge=False, box=None)
    table.add_column("#", justify="right")
    table.add_column("score", no_wrap=True)
    table.add_column("lanes", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("id", no_wrap=True, min_width=26)
    table.add_column("memory", overflow="fold", ratio=1)
    for hit in data["hits"]:
        final = hit["score"] if hit["final"] is None else hit["final"]
        final = hit["factors"].get("rerank", final)  # reranked hits are in its order
        table.add_row(str(hit["rank"]), f"{final:.4f}", _lanes_text(hit), hit["kind"],
                      hit["id"], _clip(hit["content"]))  # fmt: skip
    console.print(table)
    dropped = ", ".join(f"{n} {cause}" for cause, n in sorted(data["dropped"].items()))
    console.print(
        f"[dim]{len(data['hits'])} of {data['candidates']} candidates "
        f"({dropped or 'none dropped'}), strategy {data['strategy']}, "
        f"lanes {'+'.join(data['lanes_run'])}, {data['timing_ms'].get('total', 0):.1f} ms[/dim]"
    )
    if cue := data.get("time_cue"):
        console.print(_cue_text(cue), style="dim", markup=False, highlight=False)
    if rerank := data.get("rerank"):
        line = (
            f"reranked by {rerank['model']} over {rerank['candidates']} candidates"
            if rerank["applied"]
            else f"not reranked, fused order: {rerank['fallback']}"
        )
        console.print(line, style="dim", markup=False, highlight=False)


def _cue_text(cue: dict[str, Any]) -> str:
    """One line on what the time cue did (the reply's ``time_cue`` block)."""
    period = cue.get("period") or {}
    where = f"{period.get('after')} to {period.get('before')}" if period else "no period"
    if cue.get("ignored"):
        return f"time cue not used ({cue['ignored']}): {where}"
    line = (f"time cue {cue['confidence']} ({cue['policy']}) searched {where}: "
            f"{cue['moved']} moved, {cue['seats']} seated")  # fmt: skip
    if cue.get("revised"):
        line += ", after one revision"
    if cue.get("stopped"):
        line += f", stopped ({cue['stopped']})"
    return line


@contextmanager
def import_progress(
    path: Path, *, quiet: bool, console: Console | None = None
) -> Iterator[Callable[[int], None] | None]:
    """A byte-based progress bar (on stderr) for large files on a terminal; else nothing."""
    size = path.stat().st_size
    console = console or Console(stderr=True)
    if quiet or size < PROGRESS_MIN_BYTES or not console.is_terminal:
        yield None
        return
    columns = ("{task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"importing {path.name}", total=size)
        yield lambda n: progress.advance(task, n)


def print_import_report(report: ImportReport) -> None:
    console = Console(stderr=True)
    console.print(
        f"imported {report.memories} memories, {report.episodes} episodes, "
        f"{report.triplets} triplets, {report.aliases} aliases; "
        f"{report.skipped_existing} already present; "
        f"{report.reembedded} embedded; {report.bad_lines} bad lines skipped"
    )
    for number, message in report.errors[:50]:
        console.print(f"  line {number}: {message}", markup=False, highlight=False)
    if report.bad_lines > 50:
        console.print(f"  … and {report.bad_lines - 50} more (use --json for all)")


def print_status(info: dict[str, Any]) -> None:
    console = Console()
    model = info["model"]
    console.print(f"chitta {info['version']}")
    console.print(f"store: {info['store']}")
    console.print(f"model: {model['name']} (dim {model['dim']}, sha256 {model['hash'][:12]}…)")
    if not info.get("exists"):
        console.print('the store does not exist yet; `chitta remember "…"` creates it')
        return
    if not info.get("store_model_matches", True):
        stored = info["store_model"]
        console.print(
            f"[red]the store was embedded with {stored['name']} (dim {stored['dim']}, "
            f"{stored['hash'][:12]}…), not the configured model: run `chitta reembed`[/red]"
        )
    console.print(
        f"size: {info['size_bytes'] / 1e6:.2f} MB; schema v{info['schema_version']}; "
        f"{info['memories']} memories ({info['forgotten']} forgotten), "
        f"{info['episodes']} episodes, {info['triplets']} triplets"
    )
    if info["per_realm"]:
        table = Table("realm", "memories")
        for realm, count in sorted(info["per_realm"].items()):
            table.add_row(realm, str(count))
        console.print(table)
    if daemon := info.get("daemon"):
        console.print(f"daemon: pid {daemon['pid']}, up {daemon['uptime_s']:.0f} s, "
                      f"{daemon['requests']} requests")  # fmt: skip
        table = Table("method", "requests", "errors", "p50 ms", "p95 ms")
        for method, f in daemon["methods"].items():
            table.add_row(method, str(f["requests"]), str(f["errors"]), f"{f['p50_ms']:.1f}",
                          f"{f['p95_ms']:.1f}")  # fmt: skip
        console.print(table)
