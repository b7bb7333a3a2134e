"""Human-readable rendering for the CLI (rich tables, progress) and the JSON shapes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn
from rich.table import Table

from chitta.recall.pipeline import RecallResult
from chitta.transfer import ImportReport, memory_to_dict

#: Files at least this large get a progress bar on import.
PROGRESS_MIN_BYTES = 1 << 20


def result_to_dict(result: RecallResult) -> dict[str, Any]:
    """The JSON shape of a recall: hits with their lanes, ranks, raw scores and shares."""
    hits = []
    for rank, hit in enumerate(result.hits, start=1):
        memory = memory_to_dict(hit.memory)
        memory.pop("type")
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
                **memory,
            }
        )
    s = result.scope
    corrections = []
    for match in result.corrections:
        memory = memory_to_dict(match.memory)
        memory.pop("type")
        corrections.append({"keys": list(match.keys), **memory})
    return {
        "query": result.query,
        "strategy": result.strategy,
        "scope": {"realm": s.realm, "agent_id": s.agent_id, "channel": s.channel},
        "lanes_run": list(result.lanes_run),
        "candidates": result.candidates,
        "dropped": result.dropped,
        "hits": hits,
        "corrections": corrections,
        "timing_ms": result.timing_ms,
    }


def _lanes_text(hit) -> str:
    # A cross-realm hit names the realm it came from: xr@<realm>.
    return " ".join(
        f"{name}{'@' + hit.memory.realm if name == 'xr' else ''}#{h.rank}:{h.raw:.2f}"
        for name, h in hit.lanes.items()
    )


def _print_corrections(console: Console, result: RecallResult) -> None:
    for match in result.corrections:
        m = match.memory
        text = m.content if len(m.content) <= 200 else m.content[:199] + "…"
        console.print(f"correction {m.id} (key {', '.join(match.keys)}): {text}",
                      markup=False, highlight=False)  # fmt: skip


def print_hits(result: RecallResult) -> None:
    console = Console()
    _print_corrections(console, result)
    if not result.hits:
        console.print(f"nothing found in realm {result.scope.realm!r} for that query")
        return
    table = Table(show_lines=False, pad_edge=False, box=None)
    table.add_column("#", justify="right")
    table.add_column("score", no_wrap=True)
    table.add_column("lanes", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("id", no_wrap=True, min_width=26)
    table.add_column("memory", overflow="fold", ratio=1)
    for rank, hit in enumerate(result.hits, start=1):
        m = hit.memory
        text = m.content if len(m.content) <= 200 else m.content[:199] + "…"
        final = hit.score if hit.final is None else hit.final
        table.add_row(str(rank), f"{final:.4f}", _lanes_text(hit), m.kind.value, m.id, text)
    console.print(table)
    dropped = ", ".join(f"{n} {cause}" for cause, n in sorted(result.dropped.items()))
    console.print(
        f"[dim]{len(result.hits)} of {result.candidates} candidates ({dropped or 'none dropped'})"
        f", strategy {result.strategy}, lanes {'+'.join(result.lanes_run)}, "
        f"{result.timing_ms.get('total', 0):.1f} ms[/dim]"
    )


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
        f"{report.triplets} triplets; {report.skipped_existing} already present; "
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
