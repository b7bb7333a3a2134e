"""``chitta bench analogy``: the frozen analogy benchmark (bench/analogy.py)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import ChittaError


@bench.command()
@click.option(
    "--fixture",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("benchmarks/analogy"),
    show_default=True,
    help="The folder holding store.json and cases.json.",
)
@click.option("--rounds", type=int, default=5, show_default=True,
              help="Times each case is asked, for the latency figures.")  # fmt: skip
@click.option("--hub", type=int, default=100_000, show_default=True,
              help="Also time a hub with this many edges (0: skip).")  # fmt: skip
@out_option("analogy")
@APPEND_DOCS_OPTION
def analogy(fixture: Path, rounds: int, hub: int, out: Path, append_docs: Path | None) -> None:
    """recall_analogy on the frozen cases: hit@1, hit@3, correct abstentions, unsupported
    answers (must be 0) and the latency through a real daemon's socket."""
    from chitta.bench import analogy as bench_analogy

    started = time.time()
    try:
        with tempfile.TemporaryDirectory(prefix="chitta-analogy-") as tmp:
            figures = bench_analogy.run(Path(tmp), fixture, rounds=rounds, hub=hub)
    except ChittaError as exc:
        _fail(exc)
        return
    record = {
        **record_header("analogy", started),
        **figures,
    }
    write_results(record, out, bench_analogy.markdown(record), append_docs)
