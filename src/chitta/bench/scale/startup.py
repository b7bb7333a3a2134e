"""New ``chitta`` processes: recall from spawn to exit with its peak RSS; reference starts."""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.bench.scale.measure import clean_env
from chitta.bench.scale.settings import REALM, BenchFailed

if TYPE_CHECKING:
    from chitta.bench.scale.parent import Progress


def spawn(argv: list[str]) -> tuple[float, str, float]:
    """Run ``argv``: (wall ms from spawn to exit, stdout, its peak RSS in MiB via wait4)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=clean_env())  # fmt: skip
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - start) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        if proc.returncode != 0:
            err.seek(0)
            raise BenchFailed(f"{shlex.join(argv)} failed ({proc.returncode}): "
                              f"{err.read()[-2000:]}")  # fmt: skip
    return wall, stdout, usage.ru_maxrss / 1024


def chitta_command() -> list[str]:
    """The ``chitta`` script beside this interpreter, or ``python -m chitta``."""
    script = Path(sys.executable).with_name("chitta")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "chitta"]


def cli_figures(
    home: Path, queries: list[str], n: int, progress: Progress, store: str | None = None
) -> dict[str, Any]:
    """``chitta recall --json`` in a new process, once per query: wall time and peak RSS
    (``--store URL`` for a database store)."""
    walls, inner_ms, peaks = [], [], []
    progress.task(f"N={n:,}: new `chitta recall` processes", len(queries))
    where = ["--store", store] if store else []
    for q in queries:
        argv = [*chitta_command(), "--home", str(home), *where, "recall", q, "--realm", REALM,
                "--json"]  # fmt: skip
        ms, stdout, peak = spawn(argv)
        result = json.loads(stdout)
        if not result.get("ok") or not result.get("hits"):
            raise BenchFailed(f"CLI recall returned no hits: {stdout[:500]}")
        walls.append(ms)
        peaks.append(peak)
        inner_ms.append(result["timing_ms"]["total"])
        progress.advance()
    return {
        "runs": len(walls),
        "recall_process_ms_median": round(statistics.median(walls), 1),
        "recall_process_ms_all": [round(w, 1) for w in walls],
        "recall_in_process_total_ms_median": round(statistics.median(inner_ms), 3),
        "peak_rss_mb_median": round(statistics.median(peaks), 1),
        "peak_rss_mb_all": [round(p, 1) for p in peaks],
    }


def reference_starts(runs: int) -> dict[str, float]:
    """Start-up of a bare interpreter and of importing chitta's CLI, for comparison."""
    py = sys.executable
    imports = [spawn([py, "-c", "import chitta.cli"])[0] for _ in range(runs)]
    bare = [spawn([py, "-c", "pass"])[0] for _ in range(runs)]
    return {
        "import_chitta_cli_ms_median": round(statistics.median(imports), 1),
        "python_bare_start_ms_median": round(statistics.median(bare), 1),
    }
