"""The parent: one worker process per phase and N, the CLI runs, and the results record."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chitta.bench.environment import loadavg
from chitta.bench.scale.backends import BUILD_MEMORY, Server, postgres_server
from chitta.bench.scale.measure import clean_env
from chitta.bench.scale.report import one_line
from chitta.bench.scale.settings import (
    BASE_SET,
    BATCH,
    LIMIT,
    NOISE_SD,
    PAIRED_TEXTS,
    REALM,
    SEED,
    SYNTHETIC_FROM,
    BenchFailed,
)
from chitta.bench.scale.startup import cli_figures, reference_starts
from chitta.bench.scale.texts import base_turns, query_pool
from chitta.errors import BadArgument


class Progress:
    """A rich progress display fed by worker events (or nothing, when quiet)."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(
            "{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=console, transient=False,
        )  # fmt: skip
        self.current: Any = None

    def __enter__(self) -> Progress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def task(self, description: str, total: int) -> None:
        self.current = self.bar.add_task(description, total=total)

    def advance(self, by: int = 1) -> None:
        if self.current is not None:
            self.bar.advance(self.current, by)

    def note(self, message: str) -> None:
        self.bar.console.print(message, markup=False, highlight=False)


def run_worker(phase: str, spec: dict[str, Any], folder: Path, progress: Progress) -> dict:
    """Run one phase in a new Python process, relaying its progress; its result."""
    spec_path = folder / f"{phase}.spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    log_path = folder / f"{phase}.log"
    argv = [sys.executable, "-m", "chitta.bench.scale", phase, str(spec_path)]
    result = None
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True,
                                env=clean_env())  # fmt: skip
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                event = json.loads(line)
                if event["event"] == "task":
                    progress.task(event["description"], event["total"])
                elif event["event"] == "advance":
                    progress.advance(event["by"])
                elif event["event"] == "result":
                    result = event["data"]
            code = proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if code != 0 or result is None:
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise BenchFailed(f"the {phase} step for N={spec['n']:,} failed (exit {code}); "
                          f"{log_path}:\n{tail}")  # fmt: skip
    return result


@dataclass(frozen=True, slots=True)
class _Plan:
    """What every size is measured with: the LoCoMo file and the queries, split by use."""

    path: Path
    turns: int
    warmup: str
    recall_qs: list[str]
    cli_qs: list[str]


def _plan(data: Path | None, queries: int, cli_runs: int) -> _Plan:
    """Check the counts, load the LoCoMo file and take distinct questions for each use."""
    from chitta.bench import environment, locomo

    if not 1 <= queries <= 1000:
        raise BadArgument(f"--queries must be between 1 and 1000, got {queries}")
    if not 1 <= cli_runs <= 50:
        raise BadArgument(f"--cli-runs must be between 1 and 50, got {cli_runs}")
    path = (data or environment.default_locomo()).resolve()
    dataset = locomo.load(path)
    turns = base_turns(dataset)
    pool = query_pool(dataset, SEED)
    needed = queries + 1 + cli_runs
    if len(pool) < needed:
        raise BadArgument(f"need {needed} distinct questions, {path} has {len(pool)}")
    return _Plan(path, len(turns), pool[0], pool[1 : 1 + queries], pool[-cli_runs:])


def _settings(
    sizes: list[int], plan: _Plan, cli_runs: int, reuse_vectors: bool, workdir: Path | None
) -> dict[str, Any]:
    """The results record's ``settings``: what was run, and how the content was made."""
    return {
        "sizes": sizes,
        "queries": len(plan.recall_qs),
        "cli_runs": cli_runs,
        "realm": REALM,
        "limit": LIMIT,
        "import_batch": BATCH,
        "seed": SEED,
        "data": str(plan.path),
        "locomo_turns_distinct": plan.turns,
        "content": "LoCoMo turns (memory_text: 'speaker: text' plus any image caption), "
        "then distinct recombinations: up to half the sentences of one turn (with its "
        "speaker) followed by up to half of another's, seeded RNG",
        "queries_from": "LoCoMo qa questions, distinct, shuffled with the seed",
        "synthetic_from": SYNTHETIC_FROM,
        "synthetic": f"N >= {SYNTHETIC_FROM:,}: the first {BASE_SET:,} texts embedded; "
        f"later memories get a random one of those vectors + N(0, {NOISE_SD}²) per "
        "dimension, re-normalised, and are written with Store.insert (no embedding)",
        "paired_texts": PAIRED_TEXTS,
        "reuse_vectors": reuse_vectors,
        "embed_settings": "EmbedSettings() defaults (CHITTA_* variables ignored)",
        "workdir": str(workdir) if workdir else None,
    }


def _measure_size(
    n: int,
    folder: Path,
    plan: _Plan,
    base: Path,
    reuse_vectors: bool,
    progress: Progress,
    backend: str = "sqlite",
    server: Server | None = None,
) -> dict[str, Any]:
    """One size on one backend in a fresh ``folder`` (and, for PostgreSQL, a fresh database
    on ``server``): the build and recall workers, then the CLI runs."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    home = folder / "home"
    store = server.fresh(n) if server is not None else None
    spec = {"n": n, "home": str(home), "data": str(plan.path), "seed": SEED,
            "workdir": str(base), "reuse_vectors": reuse_vectors, "backend": backend,
            "store": store, "warmup": plan.warmup, "queries": plan.recall_qs}  # fmt: skip
    row: dict[str, Any] = {"backend": backend, "loadavg_before": loadavg()}
    t = time.perf_counter()
    row["build"] = run_worker("build", spec, folder, progress)
    row["recall"] = run_worker("recall", spec, folder, progress)
    row["cli"] = cli_figures(home, plan.cli_qs, n, progress, store)
    row["wall_s"] = round(time.perf_counter() - t, 1)
    row["loadavg_after"] = loadavg()
    return row


def figure_key(n: int, backend: str) -> str:
    """A row's key in the record's ``figures``: ``"10000"`` for SQLite (as before there were
    two backends), ``"10000-postgresql"`` for PostgreSQL."""
    return str(n) if backend == "sqlite" else f"{n}-{backend}"


def run(
    *,
    sizes: list[int],
    queries: int,
    data: Path | None,
    workdir: Path | None,
    reuse_vectors: bool,
    cli_runs: int,
    command: str,
    console: Any,
    backends: tuple[str, ...] | list[str] = ("sqlite",),
    database_url: str | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every phase for every size on every backend (a size's backends one after the other);
    the results record (also given to ``checkpoint`` after
    each size, marked incomplete, so a long run that fails late keeps what it measured)."""
    from chitta.bench import environment

    plan = _plan(data, queries, cli_runs)
    started = time.perf_counter()
    load_before = loadavg()
    figures: dict[str, Any] = {}
    pg_info: dict[str, Any] | None = None

    def record(complete: bool) -> dict[str, Any]:
        return {
            "complete": complete,
            "benchmark": "scale",
            "command": command,
            "commit": environment.git_commit(),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {
                **environment.machine(),
                "loadavg_before": load_before,
                "loadavg_after": loadavg(),
            },
            "wall_s": round(time.perf_counter() - started, 1),
            "settings": {
                **_settings(sizes, plan, cli_runs, reuse_vectors, workdir),
                "backends": list(backends),
                "postgresql": pg_info,
            },
            "reference": reference,
            "figures": figures,
        }

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="chitta-scale-"))
        base = (workdir or Path(tmp)).resolve()
        base.mkdir(parents=True, exist_ok=True)
        server = None
        if "postgresql" in backends:
            server = stack.enter_context(postgres_server(database_url, base))
            pg_info = {**server.describe(), "hnsw_build_memory": BUILD_MEMORY}
        progress = stack.enter_context(Progress(console))
        reference = reference_starts(cli_runs)
        for n in sizes:
            for backend in backends:
                key = figure_key(n, backend)
                folder = base / f"n{key}"
                on = server if backend == "postgresql" else None
                figures[key] = row = _measure_size(n, folder, plan, base, reuse_vectors,
                                                   progress, backend, on)  # fmt: skip
                progress.note(one_line(row))
                if checkpoint is not None:
                    checkpoint(record(complete=False))
                if workdir is None:
                    shutil.rmtree(folder, ignore_errors=True)
                    if on is not None:
                        on.drop(n)
    return record(complete=True)
