"""``chitta bench abstain``: the abstention benchmark (bench/abstain.py) from the command line."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
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
from chitta.files import write_text_private


@bench.command()
@DATA_OPTION
@click.option(
    "--fit-on",
    default="tune",
    show_default=True,
    help="Conversations the calibration is fitted on (tune, or ids); the figures are "
    "measured on the others.",
)
@click.option(
    "--per-store",
    type=int,
    default=150,
    show_default=True,
    help="Unanswerable questions asked of each conversation's store.",
)
@out_option("abstain")
@APPEND_DOCS_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Keep the benchmark store here (default: a temporary folder).",
)
def abstain(**opts: Any) -> None:
    """Calibrated "I know this" / "I don't know": AUROC, calibration error, bands, silencing."""
    try:
        _abstain(**opts)
    except ChittaError as exc:
        _fail(exc)


def _abstain(
    data: Path | None,
    fit_on: str,
    per_store: int,
    out: Path,
    append_docs: Path | None,
    workdir: Path | None,
) -> None:
    from rich.console import Console
    from rich.progress import Progress

    from chitta.bench import abstain as ab
    from chitta.bench import environment, locomo
    from chitta.bench.systems.chitta import ChittaStore
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder
    from chitta.recall.confidence import calibration as calib
    from chitta.wire import result_to_dict

    if per_store < 1:
        raise BadArgument("--per-store must be at least 1")
    console = Console(stderr=True)
    path = data or environment.default_locomo()
    dataset = locomo.load(path)
    fit_ids = _fit_ids(dataset, fit_on)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="chitta-abstain-") as tmp:
        store = ChittaStore((workdir or Path(tmp)) / "chitta", build_embedder(EmbedSettings()))
        try:
            for conversation in dataset.conversations:
                store.load(ab.realm_for(conversation.sample_id), conversation)
            chitta = store.open()
            stats = chitta.store.term_stats()
            others = {c.sample_id for c in dataset.conversations} - fit_ids
            items = ab.build_set(dataset, stats.df, per_store, groups=[fit_ids, others])
            model = chitta.embedder.identity().name
            probes, ms = [], []
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("recalling", total=len(items))
                for item in items:
                    t = time.perf_counter()
                    probes.append(
                        ab.probe(
                            lambda q, realm: result_to_dict(
                                chitta.recall(q, realm=realm, limit=ab.LIMIT, record=False)
                            ),
                            item,
                            store.turn_of,
                        )
                    )
                    ms.append((time.perf_counter() - t) * 1000)
                    progress.advance(task)
        finally:
            store.close()
    record: dict[str, Any] = {
        **record_header("abstain", started),
        "data": str(path),
        "fit_on": sorted(fit_ids),
        "latency_ms": {"p50": round(statistics.median(ms), 2), "n": len(ms)},
        "pairs": [
            {"raw": p.raw, "hit3": p.hit3, "answerable": p.answerable, "realm": p.realm}
            for p in probes
        ],  # fmt: skip
        "probes": [p.as_dict() for p in probes],
    }
    # The recalls are written before anything is fitted: a set the figures cannot be
    # computed on (one kind of question only) still leaves its observations behind.
    write_text_private(out, json.dumps(record, indent=1) + "\n")
    gold_of = {(q.conversation, q.index): q.gold for q in dataset.questions}
    fitting = [p for p in probes if _own(p, fit_ids)]
    held = [p for p in probes if not _own(p, fit_ids)]
    fit = calib.fit_calibration(
        [p.raw for p in fitting],
        [p.hit3 for p in fitting],
        unanswerable=[not p.answerable for p in fitting],
        source=f"bench abstain on {', '.join(sorted(fit_ids))}",
        fitted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        model=model,
    )
    record["fit"] = json.loads(fit.to_json())
    record["held_out"] = ab.measure(held, fit, gold_of)
    record["held_out_default_fit"] = ab.measure(held, calib.DEFAULT, gold_of)
    record["fitting_set"] = ab.measure(fitting, fit, gold_of)
    write_results(record, out, markdown(record), append_docs)
    console.print(f"wrote {out} and {out.with_suffix('.md')}")


def _fit_ids(dataset: Any, fit_on: str) -> set[str]:
    from chitta.bench import locomo

    ids = [c.sample_id for c in dataset.conversations]
    wanted = set(locomo.TUNE_SPLIT) if fit_on == "tune" else set(_split(fit_on))
    unknown = sorted(wanted - set(ids))
    if unknown:
        raise BadArgument(f"--fit-on names {unknown[0]!r}, which the file does not have")
    if not wanted or wanted == set(ids):
        raise BadArgument("--fit-on must leave some conversations out to measure on")
    return wanted


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _own(probe: Any, fit_ids: set[str]) -> bool:
    """A probe of the fitting set: asked of a fitting store (its question may come from any)."""
    from chitta.bench.runner import realm_for

    return probe.realm in {realm_for(i) for i in fit_ids}


def markdown(record: dict[str, Any]) -> str:
    """The abstention table for docs/benchmarks.md."""
    rows = [
        ("held-out, fitted calibration", record["held_out"]),
        ("held-out, default calibration", record["held_out_default_fit"]),
        ("fitting set (in-sample)", record["fitting_set"]),
    ]
    lines = [
        f"### Abstention run, {record['created_at'][:10]}",
        "",
        f"Command: `{record['command']}` (commit {str(record['commit'])[:12]}; fitted on "
        f"{', '.join(record['fit_on'])}; recall p50 {record['latency_ms']['p50']} ms)",
        "",
        "| set | answerable / unanswerable | AUROC | ECE raw | ECE shown | ECE refit (LOO) "
        "| hit@3 KNOWN / UNKNOWN | the same, answerable only | answerable in UNKNOWN "
        "| unanswerable in KNOWN "
        "| recall@10 answerable, plain → gated |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in rows:
        bands, answerable = m["bands"], m["bands_answerable"]
        lines.append(
            f"| {name} | {m['questions']['answerable']} / {m['questions']['unanswerable']} "
            f"| {m['auroc']:.3f} | {m['ece_raw']:.3f} | {m['ece_shown']:.3f} "
            f"| {m['ece_refit_loo']:.3f} | {_band(bands['KNOWN'])} / {_band(bands['UNKNOWN'])} "
            f"| {_band(answerable['KNOWN'])} / {_band(answerable['UNKNOWN'])} "
            f"| {m['answerable_in_unknown']:.3f} | {m['unanswerable_in_known']:.3f} "
            f"| {m['recall@10_answerable']:.3f} → {m['recall@10_answerable_gated']:.3f} |"
        )
    fit = record["fit"]
    lines += [
        "",
        f"Fit: a = {fit['a']:.3f}, b = {fit['b']:.3f}, threshold {fit['threshold']}, "
        f"display refit {fit['display_a']:.3f} / {fit['display_b']:.3f} "
        f"({fit['pairs']} pairs).",
        "",
    ]
    lines += [
        "Reliability on the held-out set (fitted calibration):",
        "",
        "| predicted | n | mean predicted | observed hit@3 |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['bin']} | {r['n']} | {r['predicted']} | {r['observed']} |"
        for r in record["held_out"]["reliability"]
    ]
    return "\n".join(lines) + "\n"


def _band(band: dict[str, Any]) -> str:
    return "—" if band["hit@3"] is None else f"{band['hit@3']:.3f} (n {band['n']})"
