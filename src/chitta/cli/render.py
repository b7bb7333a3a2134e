"""Human-readable rendering for the CLI: rich tables, progress bars, one-line summaries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TimeRemainingColumn,
)
from rich.table import Table

from chitta.code.notes import stale_note
from chitta.subconscious import pending_note
from chitta.validate import format_time

if TYPE_CHECKING:
    from chitta.transfer import ImportReport


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


def _newer_text(hit: dict[str, Any], rank_of: dict[str, int]) -> str:
    """``(newer: #2) `` before a hit a newer one shown may have outdated (recall/updates.py);
    ``(superseded by <id>) `` when that is recorded and the newer one is not shown."""
    newer = hit.get("newer")
    if newer in rank_of:
        return f"(newer: #{rank_of[newer]}) "
    if newer is not None and newer == hit.get("superseded_by"):
        return f"(superseded by {newer}) "
    return ""


def _stale_text(hit: dict[str, Any]) -> str:
    """``(possibly stale: Cart.total changed since a..b) `` before a hit whose linked code
    changed (code/stale.py)."""
    rows = hit.get("possibly_stale")
    return f"({stale_note(rows)}) " if rows else ""


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
    rank_of = {hit["id"]: hit["rank"] for hit in data["hits"]}
    for hit in data["hits"]:
        final = hit["score"] if hit["final"] is None else hit["final"]
        final = hit["factors"].get("rerank", final)  # reranked hits are in its order
        table.add_row(str(hit["rank"]), f"{final:.4f}", _lanes_text(hit), hit["kind"],
                      hit["id"], _newer_text(hit, rank_of) + _stale_text(hit)
                      + _clip(hit["content"]))  # fmt: skip
    console.print(table)
    dropped = ", ".join(f"{n} {cause}" for cause, n in sorted(data["dropped"].items()))
    console.print(
        f"[dim]{len(data['hits'])} of {data['candidates']} candidates "
        f"({dropped or 'none dropped'}), strategy {data['strategy']}, "
        f"lanes {'+'.join(data['lanes_run'])}, {data['timing_ms'].get('total', 0):.1f} ms[/dim]"
    )
    if cue := data.get("time_cue"):
        console.print(_cue_text(cue), style="dim", markup=False, highlight=False)
    if waiting := data.get("unembedded"):
        console.print(pending_note(waiting), style="dim", markup=False, highlight=False)
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
def progress_bar(
    label: str, unit: str | None, *, quiet: bool, console: Console | None = None
) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long work on a terminal (``unit`` "bytes" or a word such
    as "memories"); else nothing. Its callback takes ``(done, total)``, in process and from
    the daemon's progress notifications alike."""
    console = console or Console(stderr=True)
    if unit is None or quiet or not console.is_terminal:
        yield None
        return
    count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    columns = ("{task.description}", BarColumn(), count, TimeRemainingColumn())
    with Progress(*columns, console=console) as bar:
        task = bar.add_task(label.replace("_", " "), total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield advance


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


def print_migration_report(data: dict[str, Any]) -> None:
    """What a migration copied and skipped, table by table, and what the destination lacks."""
    console = Console(stderr=True)
    how = "merged into" if data["merged"] else "migrated to"
    console.print(f"{data['source']} {how} {data['destination']}", markup=False, highlight=False)
    for table, copied in data["copied"].items():
        line = f"  {table}: {copied} copied, {data['skipped'][table]} already there"
        if data["missing"][table]:
            line += f", {data['missing'][table]} MISSING"
        console.print(line, markup=False, highlight=False)
    if data["complete"]:
        console.print("checked: the destination holds everything the source holds")
    else:
        console.print("the destination lacks records of the source: run the migration again")


def print_status(info: dict[str, Any]) -> None:
    console = Console()
    model = info["model"]
    console.print(f"chitta {info['version']}")
    console.print(f"store: {info['store']}")
    console.print(f"model: {model['name']} (dim {model['dim']}, sha256 {model['hash'][:12]}…)")
    if realm := info.get("realm"):
        console.print(f"in use here: {realm_words(realm)}", markup=False, highlight=False)
    if not info.get("exists"):
        console.print('the store does not exist yet; `chitta remember "…"` creates it')
        return
    if why := info.get("read_only"):
        console.print(f"read-only ({why}): reads work, writes are refused",
                      markup=False, highlight=False)  # fmt: skip
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
    if queued := info.get("spool"):
        console.print(spool_words(queued), markup=False, highlight=False)
    for line in upkeep_words(info):
        console.print(line, markup=False, highlight=False)
    if daemon := info.get("daemon"):
        idle = daemon.get("idle_exit_s")
        stops = f", stops after {idle} s without a request" if idle else ""
        console.print(f"daemon: pid {daemon['pid']}, up {daemon['uptime_s']:.0f} s, "
                      f"{daemon['requests']} requests{stops}")  # fmt: skip
        if warm := warmup_words(daemon.get("warmup")):
            console.print(warm, markup=False, highlight=False)
        table = Table("method", "requests", "errors", "p50 ms", "p95 ms")
        for method, f in daemon["methods"].items():
            table.add_row(method, str(f["requests"]), str(f["errors"]), f"{f['p50_ms']:.1f}",
                          f"{f['p95_ms']:.1f}")  # fmt: skip
        console.print(table)


def warmup_words(warmup: dict[str, Any] | None) -> str | None:
    """The daemon's warm-up in one line: under way, or what each index took to build."""
    if not warmup or warmup["state"] == "not started":
        return None
    if warmup["state"] == "warming":
        return "indexes: warming up (a recall now waits for the ones it needs)"
    parts = ", ".join(f"{name} {ms:.0f} ms" for name, ms in warmup["parts_ms"].items())
    verb = {"ready": "built in", "stopped": "warm-up stopped after",
            "failed": "warm-up failed after"}  # fmt: skip
    return f"indexes: {verb[warmup['state']]} {warmup['total_ms']:.0f} ms ({parts or 'none'})"


def upkeep_words(info: dict[str, Any]) -> list[str]:
    """The upkeep lines of ``chitta status``: the daemon's live figures when a daemon
    answered, else the last sweeps the store recorded."""
    live = (info.get("daemon") or {}).get("upkeep")
    if live is None:
        last = info.get("upkeep_last") or {}
        done = "; ".join(f"{name} {_sweep_words(rec)}" for name, rec in sorted(last.items()))
        return [f"upkeep: runs in the daemon (`chitta serve`); last sweeps: {done or 'none yet'}"]
    if not live["enabled"]:
        return [
            "upkeep: off (CHITTA_UPKEEP=0 or --no-upkeep); `chitta decay` and "
            "`chitta hygiene` run it by hand"
        ]
    lines = [
        f"upkeep: {'running' if live['running'] else 'stopped'}, at most "
        f"{live['share']:.0%} of a core (used {live['used_share']:.1%} since the start)"
    ]
    for name, task in live["tasks"].items():
        if name == "embed":
            lines.append(
                f"  embed: {task.get('waiting', 0)} memories waiting for their vectors"
                f" ({task.get('deferred', 0)} stored under load since the start),"
                f" {task.get('sentences_waiting', 0)} for their sentences'"
            )
            continue
        if task["under_way"]:
            now = f"sweep under way ({task['under_way']['seen']} memories so far)"
        else:
            due = format_time(task["due_ms"])
            now = f"next sweep {due}" if due else "next sweep soon"
        last = _sweep_words(task["last"]) if task["last"] else "no sweep yet"
        error = f"; last step failed: {task['error']}" if task.get("error") else ""
        lines.append(f"  {name}: {last}; {now}{error}")
    return lines


#: A sweep's own counts, as `chitta status` words them.
_SWEEP_COUNTS = {"demoted": "demoted", "merged": "merged", "conflicts": "conflicts",
                 "attractors": "attractor sets found again",
                 "reassessed": "theme members re-examined"}  # fmt: skip


def _sweep_words(record: dict[str, Any]) -> str:
    """One finished sweep in words: when, what it read and changed, its time of work."""
    extra = ", ".join(f"{record[k]} {words}" for k, words in _SWEEP_COUNTS.items()
                      if k in record)  # fmt: skip
    return (
        f"swept {format_time(record.get('finished_ms'))}: {record.get('seen', 0)} "
        f"memories, {record.get('changed', 0)} changed{', ' + extra if extra else ''}, "
        f"{record.get('busy_ms', 0):.0f} ms of work"
    )


def spool_words(queued: dict[str, Any]) -> str:
    """The spool's line of ``chitta status``: records waiting, and the last intake."""
    waiting = queued.get("waiting", 0)
    line = f"spool: {waiting} record{'' if waiting == 1 else 's'} waiting"
    if waiting:
        line += " (the daemon takes them in when it starts)"
    last = queued.get("last_intake")
    if last:
        line += (f"; last intake {last.get('finished_at')}: {last.get('taken', 0)} taken, "
                 f"{last.get('corrupt', 0)} corrupt lines skipped, "
                 f"{last.get('refused', 0)} refused")  # fmt: skip
        if not last.get("complete", True):
            line += " (stopped early; the rest waits)"
    return line


def realm_words(realm: dict[str, Any]) -> str:
    """The realm a command uses and the rule that chose it (scope.RealmChoice), in words."""
    from chitta.scope import RealmChoice

    return RealmChoice(realm["name"], realm["rule"], realm.get("where")).describe()
