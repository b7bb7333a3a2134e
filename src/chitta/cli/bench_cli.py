"""``chitta bench cli``: CLI commands' wall time in process and through the daemon."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

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
from chitta.errors import ChittaError


@bench.command()
@click.option("--n", type=int, default=10_000, show_default=True,
              help="Memories in the store the commands run on.")  # fmt: skip
@click.option("--runs", type=int, default=5, show_default=True,
              help="New processes per command and mode.")  # fmt: skip
@DATA_OPTION
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="An empty folder for the store, kept afterwards (default: a temporary one, removed).",
)
@out_option("cli")
@APPEND_DOCS_OPTION
def cli(n: int, runs: int, data: Path | None, workdir: Path | None, out: Path,
        append_docs: Path | None) -> None:  # fmt: skip
    """`show`, `status`, `recall`, `export` and `remember` as new processes, timed from spawn
    to exit: with no daemon (the command opens the store) and through a daemon's socket."""
    from rich.console import Console

    from chitta.bench import cli_paths, environment

    console = Console(stderr=True)
    started = time.time()
    path = data or environment.default_locomo()
    try:
        with tempfile.TemporaryDirectory(prefix="chitta-bench-cli-") as tmp:
            figures = cli_paths.run(
                workdir or Path(tmp), path, n=n, runs=runs,
                tick=lambda step: console.print(step, markup=False, highlight=False),
            )  # fmt: skip
    except ChittaError as exc:
        _fail(exc)
        return
    record = {
        **record_header("cli", started),
        "settings": {"n": n, "runs": runs, "data": path.name, "realm": cli_paths.REALM,
                     "commands": {c: " ".join(w) for c, w in cli_paths.SHAPES.items()}},
        **figures,
    }  # fmt: skip
    write_results(record, out, cli_paths.markdown(record), append_docs)
