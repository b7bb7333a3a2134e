"""``chitta bench soak``: a long mixed hostile load against a real daemon (bench/soak.py)."""

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
@click.option("--duration", type=float, default=300.0, show_default=True,
              help="Seconds of load (kills, warm and hostile phases: 30/10/60 %).")  # fmt: skip
@click.option("--quiet", type=float, default=30.0, show_default=True,
              help="Seconds with no requests at the end, before RSS is read again.")  # fmt: skip
@click.option("--clients", type=int, default=4, show_default=True,
              help="Threads sending valid mixed requests.")  # fmt: skip
@click.option("--flood", type=int, default=1200, show_default=True,
              help="Connections each flood opens and holds.")  # fmt: skip
@click.option("--nofile", type=int, default=1024, show_default=True,
              help="The daemon's open-file limit (RLIMIT_NOFILE).")  # fmt: skip
@click.option("--slow", type=int, default=50, show_default=True,
              help="Slow clients (half a line, then silence) held at a time.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="An empty folder for the store and the daemon's log, kept (default: a temporary one).",
)
@out_option("soak")
@APPEND_DOCS_OPTION
def soak(duration: float, quiet: float, clients: int, flood: int, nofile: int, slow: int,
         seed: int, workdir: Path | None, out: Path, append_docs: Path | None) -> None:  # fmt: skip
    """Floods, malformed frames, oversized requests, slow and partial clients, valid mixed
    requests and SIGKILLs of the daemon, for --duration seconds; requests served, errors by
    kind, the daemon's RSS over time and acknowledged writes lost."""
    from chitta.bench import environment
    from chitta.bench.soak import Soak, SoakSettings, markdown

    settings = SoakSettings(duration_s=duration, quiet_s=quiet, clients=clients, flood=flood,
                            nofile=nofile, slow=slow, seed=seed)  # fmt: skip
    started = time.time()
    load_before = environment.loadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="chitta-soak-") as tmp:
            base = workdir or Path(tmp)
            base.mkdir(parents=True, exist_ok=True)
            figures = Soak(base, settings, tick=lambda line: click.echo(line, err=True)).run()
    except ChittaError as exc:
        _fail(exc)
        return
    header = record_header("soak", started)
    header["machine"]["loadavg_before"] = load_before
    record = {**header, **figures}
    write_results(record, out, markdown(record), append_docs)
