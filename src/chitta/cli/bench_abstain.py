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
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import BadArgument, ChittaError
from chitta.files import write_text_private


@bench.command()
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    multiple=True,
    help="A file in LoCoMo's format (default: ../shared/data/locomo10.json); give it again "
    "for another set (e.g. the LongMemEval sample): one calibration is fitted on all of them.",
)
@click.option(
    "--fit-on",
    default="tune",
    show_default=True,
    help="Conversations the calibration is fitted on (tune: each set's tuning half; or ids "
    "of one set); the figures are measured on the others.",
)
@click.option(
    "--per-store",
    type=int,
    default=150,
    show_default=True,
    help="Unanswerable questions asked of each conversation's store.",
)
@click.option(
    "--small",
    type=int,
    default=60,
    show_default=True,
    help="Small stores (one to five memories) per set and half, each asked one answerable "
    "and one unanswerable question; 0: none.",
)
@out_option("abstain")
@APPEND_DOCS_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Keep the benchmark store here (default: a temporary folder).",
)
@click.option(
    "--vector-cache",
    type=click.Path(path_type=Path),
    help="Keep the turns' vectors in this folder (or .npz file) and reuse them in the next "
    "run (as `chitta bench locomo --vector-cache`).",
)
def abstain(**opts: Any) -> None:
    """Calibrated "I know this" / "I don't know": AUROC, calibration error, bands, silencing."""
    try:
        _abstain(**opts)
    except ChittaError as exc:
        _fail(exc)


def _abstain(
    data: tuple[Path, ...],
    fit_on: str,
    per_store: int,
    small: int,
    out: Path,
    append_docs: Path | None,
    workdir: Path | None,
    vector_cache: Path | None,
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
    if small < 0:
        raise BadArgument("--small must not be negative")
    console = Console(stderr=True)
    paths = list(data) or [environment.default_locomo()]
    datasets = [locomo.load(path) for path in paths]
    names = _set_names(paths)
    if fit_on != "tune" and len(datasets) > 1:
        raise BadArgument("--fit-on with ids goes with one --data; with several, use tune")
    fit_ids = {name: _fit_ids(path, d, fit_on) for name, path, d in
               zip(names, paths, datasets, strict=True)}  # fmt: skip
    embedder = build_embedder(EmbedSettings())
    if vector_cache is not None:
        from chitta.bench.turn_vectors import DocumentCache, cache_file

        embedder = DocumentCache(embedder, cache_file(vector_cache, embedder.identity()))
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="chitta-abstain-") as tmp:
        store = ChittaStore((workdir or Path(tmp)) / "chitta", embedder)
        try:
            asked: list[tuple[str, Any]] = []
            fitting_realms: set[str] = set()  # the fitting conversations' and their parts'
            for name, dataset in zip(names, datasets, strict=True):
                for conversation in dataset.conversations:
                    store.load(ab.realm_for(conversation.sample_id), conversation)
                chitta = store.open()
                stats = chitta.store.term_stats()
                others = {c.sample_id for c in dataset.conversations} - fit_ids[name]
                groups = [fit_ids[name], others]
                items = ab.build_set(dataset, stats.df, per_store, groups=groups)
                smalls, small_items = ab.small_stores(dataset, items, small, groups)
                for realm, part in smalls:
                    store.load(realm, part)
                    if part.sample_id in fit_ids[name]:
                        fitting_realms.add(realm)
                fitting_realms |= {ab.realm_for(i) for i in fit_ids[name]}
                asked += [(name, item) for item in items + small_items]
            chitta = store.open()
            stats = chitta.store.term_stats()
            model = chitta.embedder.identity().name
            probes, ms = [], []
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("recalling", total=len(asked))
                for name, item in asked:
                    t = time.perf_counter()
                    probes.append(
                        ab.probe(
                            lambda q, realm: result_to_dict(
                                chitta.recall(q, realm=realm, limit=ab.LIMIT, record=False)
                            ),
                            item,
                            store.turn_of,
                            size=stats.size(item.realm),
                            dataset=name,
                        )
                    )
                    ms.append((time.perf_counter() - t) * 1000)
                    progress.advance(task)
        finally:
            store.close()
    record: dict[str, Any] = {
        **record_header("abstain", started),
        "data": [str(p) for p in paths],
        "fit_on": sorted(i for ids in fit_ids.values() for i in ids),
        "latency_ms": {"p50": round(statistics.median(ms), 2), "n": len(ms)},
        "pairs": [
            {
                "raw": p.raw,
                "hit3": p.hit3,
                "answerable": p.answerable,
                "realm": p.realm,
                "size": p.size,
                "found": p.found,
                "held": p.held,
                "set": p.dataset,
                "small": p.small,
            }
            for p in probes
        ],  # fmt: skip
        "probes": [p.as_dict() for p in probes],
    }
    # The recalls are written before anything is fitted: a set the figures cannot be
    # computed on (one kind of question only) still leaves its observations behind.
    write_text_private(out, json.dumps(record, indent=1) + "\n")
    gold_of = {(q.conversation, q.index): q.gold for d in datasets for q in d.questions}
    fitting = [p for p in probes if p.realm in fitting_realms]
    held = [p for p in probes if p.realm not in fitting_realms]
    fit = calib.fit_calibration(
        [p.raw for p in fitting],
        [p.hit3 for p in fitting],
        sizes=[p.size for p in fitting],
        found=[p.found for p in fitting],
        held=[p.held for p in fitting],
        unanswerable=[not p.answerable for p in fitting],
        source=f"bench abstain on the tuning halves of {', '.join(names)}"
        if fit_on == "tune" else f"bench abstain on {', '.join(sorted(fit_ids[names[0]]))}",
        fitted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        model=model,
    )  # fmt: skip
    record["fit"] = json.loads(fit.to_json())
    record["held_out"] = ab.measure(held, fit, gold_of)
    record["held_out_default_fit"] = ab.measure(held, calib.DEFAULT, gold_of)
    record["fitting_set"] = ab.measure(fitting, fit, gold_of)
    record["sets"] = {}
    for name in names:
        rows: dict[str, Any] = {}
        for label, small_only in (("stores", False), ("small stores", True)):
            part = [p for p in held if p.dataset == name and p.small == small_only]
            if any(p.answerable for p in part) and not all(p.answerable for p in part):
                rows[label] = {"fitted": ab.measure(part, fit, gold_of),
                               "default": ab.measure(part, calib.DEFAULT, gold_of)}  # fmt: skip
        record["sets"][name] = rows
    write_results(record, out, markdown(record), append_docs)
    console.print(f"wrote {out} and {out.with_suffix('.md')}")


def _set_names(paths: list[Path]) -> list[str]:
    """Each set's name in the report: its file's stem (numbered if two share one)."""
    names: list[str] = []
    for path in paths:
        name = path.stem
        names.append(name if name not in names else f"{name}-{len(names) + 1}")
    return names


def _fit_ids(path: Path, dataset: Any, fit_on: str) -> set[str]:
    from chitta.bench import locomo

    ids = [c.sample_id for c in dataset.conversations]
    if fit_on == "tune":
        wanted = {c.sample_id for c in locomo.load(path, select="tune").conversations}
    else:
        wanted = set(_split(fit_on))
    unknown = sorted(wanted - set(ids))
    if unknown:
        raise BadArgument(f"--fit-on names {unknown[0]!r}, which the file does not have")
    if not wanted or wanted == set(ids):
        raise BadArgument("--fit-on must leave some conversations out to measure on")
    return wanted


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def markdown(record: dict[str, Any]) -> str:
    """The abstention table for docs/benchmarks.md."""
    rows = [
        ("held-out, fitted calibration", record["held_out"]),
        ("held-out, default calibration", record["held_out_default_fit"]),
        ("fitting set (in-sample)", record["fitting_set"]),
    ]
    for name, parts in record.get("sets", {}).items():
        for label, m in parts.items():
            rows += [(f"{name} held-out {label}, fitted", m["fitted"]),
                     (f"{name} held-out {label}, default", m["default"])]  # fmt: skip
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
        f"spread {fit.get('spread', 0.0):.4f}, ceiling {fit.get('ceiling', 1.0)} "
        f"(reach {fit.get('reach', 0)}, word decay {fit.get('word_decay', 0.0)}), "
        f"words found {fit.get('found_weight', 0.0):.3f}, "
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
