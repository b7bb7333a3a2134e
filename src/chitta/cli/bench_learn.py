"""``chitta bench learn``: does the resonance learner pay? Simulated feedback on each
development set's tuning half, held-out recall after each checkpoint (bench/learn.py)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

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
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    multiple=True,
    help="A file in LoCoMo's format; give it more than once for several (default: LoCoMo and "
    "the LongMemEval sample in ../shared/data).",
)
@click.option(
    "--events",
    default="0,100,500,2000",
    show_default=True,
    help="Checkpoints: feedback events after which the held-out half is measured.",
)
@click.option(
    "--wrong",
    default="0,0.2",
    show_default=True,
    help="Shares of feedback events given the wrong way round, comma-separated: one run each.",
)
@click.option("--seed", type=int, default=21, show_default=True,
              help="Seeds the question order and which events are wrong.")  # fmt: skip
@click.option(
    "--vector-cache",
    type=click.Path(path_type=Path),
    help="Reuse the turns' vectors kept in this folder (or .npz file) by an earlier run.",
)
@out_option("learn")
@APPEND_DOCS_OPTION
def learn(**opts: Any) -> None:
    """Does learning pay? Feedback a diligent agent would give (strengthen the gold rows a
    recall returned, weaken the others) on the tuning half, and the held-out half's
    recall@10 and nDCG@10 after each checkpoint, against the fixed preset (checkpoint 0);
    also with a share of the feedback wrong."""
    try:
        _learn(**opts)
    except ChittaError as exc:
        _fail(exc)


def _learn(data: tuple[Path, ...], events: str, wrong: str, seed: int,
           vector_cache: Path | None, out: Path, append_docs: Path | None) -> None:  # fmt: skip
    from rich.console import Console

    from chitta.bench import environment
    from chitta.bench import learn as bl
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    marks = _numbers(events, "--events", int)
    if any(m < 0 for m in marks) or 0 not in marks:
        raise BadArgument("--events must be whole numbers, 0 or more, and include 0")
    shares = _numbers(wrong, "--wrong", float)
    if any(not 0 <= s < 1 for s in shares):
        raise BadArgument("--wrong must be shares between 0 and 1")
    files = list(data) or [environment.default_locomo(), environment.default_longmemeval()]
    for path in files:
        if not path.is_file():
            raise BadArgument(f"no data file at {path}")
    console = Console(stderr=True)
    started = time.time()
    embedder = build_embedder(EmbedSettings()).inner
    if vector_cache is not None:
        from chitta.bench.turn_vectors import DocumentCache, cache_file

        embedder = DocumentCache(embedder, cache_file(vector_cache, embedder.identity()))
    runs = []
    with tempfile.TemporaryDirectory(prefix="chitta-learn-") as tmp:
        for path in files:
            for share in shares:
                home = Path(tmp) / f"{path.stem}-{share}"

                def say(text: str, name: str = path.name, share: float = share) -> None:
                    console.print(f"{name}, {round(share * 100)} % wrong: {text}")

                run = bl.run_learning(path, home, embedder, wrong=share, checkpoints=marks,
                                      seed=seed, progress=say)  # fmt: skip
                runs.append(run)
    record = {**record_header("learn", started), "limit": bl.LIMIT, "runs": runs}
    write_results(record, out, bl.markdown(record), append_docs)


def _numbers(text: str, option: str, kind: type) -> list:
    try:
        return [kind(part) for part in _split(text)]
    except ValueError:
        raise BadArgument(f"{option} must be comma-separated numbers, got {text!r}") from None
