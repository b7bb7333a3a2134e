"""``chitta bench cited``: cited recall on LoCoMo (bench/cited.py) from the command line."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    DATA_OPTION,
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import BadArgument, ChittaError


@bench.command()
@DATA_OPTION
@click.option(
    "--conversations",
    help="The stores asked: a count, ids, tune or held-out (default: all). The questions are "
    "the abstention set of `bench abstain`, whichever stores are asked.",
)
@click.option(
    "--limit",
    type=int,
    default=5,
    show_default=True,
    help="Chunks asked of the source (seed 003's default).",
)
@click.option(
    "--per-store",
    type=int,
    default=150,
    show_default=True,
    help="Unanswerable questions asked of each store (as `bench abstain`).",
)
@click.option(
    "--seed-rules-only",
    is_flag=True,
    help="Abstain by seed 003's rules alone, without chitta's UNKNOWN-band rule.",
)
@out_option("cited")
@APPEND_DOCS_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Keep the benchmark store here (default: a temporary folder).",
)
def cited(**opts: Any) -> None:
    """Cited recall with no model: gold turns cited on answerable questions, abstentions on
    unanswerable ones, latency."""
    try:
        _cited(**opts)
    except ChittaError as exc:
        _fail(exc)


def _cited(
    data: Path | None,
    conversations: str | None,
    limit: int,
    per_store: int,
    seed_rules_only: bool,
    out: Path,
    append_docs: Path | None,
    workdir: Path | None,
) -> None:
    from rich.console import Console
    from rich.progress import Progress

    from chitta.bench import cited as cb
    from chitta.bench import environment, locomo
    from chitta.bench.runner import realm_for
    from chitta.bench.systems.chitta import ChittaStore
    from chitta.cited.settings import MAX_LIMIT
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    if not 1 <= limit <= MAX_LIMIT:
        raise BadArgument(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if per_store < 1:
        raise BadArgument("--per-store must be at least 1")
    console = Console(stderr=True)
    path = data or environment.default_locomo()
    dataset = locomo.load(path)
    asked = [
        c.sample_id
        for c in locomo.load(path, select=locomo.parse_selection(conversations)).conversations
    ]
    started = time.time()
    load_before = environment.loadavg()
    with tempfile.TemporaryDirectory(prefix="chitta-cited-") as tmp:
        # The raw model, no query cache: a question asked of one store as unanswerable is
        # asked of its own as answerable, and a cached vector would flatter the second.
        store = ChittaStore(
            (workdir or Path(tmp)) / "chitta", build_embedder(EmbedSettings()).inner
        )
        try:
            for conversation in dataset.conversations:
                if conversation.sample_id in asked:
                    store.load(realm_for(conversation.sample_id), conversation)
            chitta = store.open()
            items = cb.question_set(dataset, asked, chitta.store.term_stats().df, per_store)
            probes = []
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("cited recall", total=len(items))
                for item in items:
                    probes.append(
                        cb.probe(chitta, item, store.turn_of, limit,
                                 respect_band=not seed_rules_only)
                    )  # fmt: skip
                    progress.advance(task)
        finally:
            store.close()
    record: dict[str, Any] = {
        **record_header("cited", started),
        "data": str(path),
        "loadavg_before": load_before,
        "settings": {
            "conversations": asked,
            "limit": limit,
            "per_store": per_store,
            "sources": [{"name": cb.SOURCE, "kind": "chitta", "priority": 1.0}],
            "model": None,
            "abstention_rules": "seed" if seed_rules_only else "seed + UNKNOWN band",
        },
        "figures": cb.figures(probes),
        "probes": [p.as_dict() for p in probes],
    }
    write_results(record, out, markdown(record), append_docs)
    console.print(f"wrote {out} and {out.with_suffix('.md')}")


def markdown(record: dict[str, Any]) -> str:
    """The cited recall tables for docs/benchmarks.md."""
    f = record["figures"]
    ans, un, lat = f["answerable"], f["unanswerable"], f["latency_ms"]
    funnel = ans["funnel"]
    lines = [
        f"### Cited recall run, {record['created_at'][:10]}",
        "",
        f"Command: `{record['command']}` (commit {str(record['commit'])[:12]}; "
        f"{len(record['settings']['conversations'])} conversations, limit "
        f"{record['settings']['limit']}, no model, abstention by "
        f"{record['settings'].get('abstention_rules', 'seed')} rules; {record['wall_s']:.0f} s)",
        "",
        "| questions | n | gold turn cited (abstention = miss) | among the answered "
        "| abstained | abstention reasons | p50 / p95 ms |",
        "|---|---|---|---|---|---|---|",
        f"| answerable | {ans['n']} | {_pct(ans['gold_cited'])} "
        f"| {_pct(ans['gold_cited_answered'])} ({ans['answered']}) "
        f"| {_pct(ans['abstained']['rate'])} | {_reasons(ans['abstained'])} "
        f"| {lat['answerable']['p50']} / {lat['answerable']['p95']} |",
        f"| unanswerable | {un['n']} | — | — | {_pct(un['rate'])} | {_reasons(un)} "
        f"| {lat['unanswerable']['p50']} / {lat['unanswerable']['p95']} |",
        "",
        "Where the answerable questions' gold turns go (share with a gold turn, abstention "
        f"aside): recall's top {record['settings']['limit']} {_pct(funnel['recalled'])} → "
        f"after the gate {_pct(funnel['returned'])} → cited after the merge "
        f"{_pct(funnel['cited'])} → quoted by the extractive answer {_pct(funnel['quoted'])}.",
        "",
        "Abstentions by the recall's confidence band (the gate silences rows sharing no "
        f"distinctive word under UNKNOWN): answerable {_bands(ans['abstained'])}; "
        f"unanswerable {_bands(un)}.",
        "",
        f"Latency of the whole call, all {lat['all']['n']} questions: p50 {lat['all']['p50']} "
        f"ms, p95 {lat['all']['p95']} ms (stage p50s: "
        + ", ".join(f"{k} {v}" for k, v in lat["all"]["stages_p50"].items())
        + f"); source or model errors: {f['errors']}.",
        "",
        "| category | n | gold turn cited (abstention = miss) | among the answered | abstained |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {c['n']} | {_pct(c['gold_cited'])} | {_pct(c['gold_cited_answered'])} "
        f"| {_pct(c['abstained']['rate'])} |"
        for name, c in f["by_category"].items()
    ]
    return "\n".join(lines) + "\n"


def _pct(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.1f} %"


def _reasons(abstained: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in abstained["by_reason"].items()) or "—"


def _bands(abstained: dict[str, Any]) -> str:
    return ", ".join(
        f"{band} {b['abstained']} of {b['n']}" for band, b in abstained["by_band"].items()
    )
