"""`chitta bench cli`: a CLI command's wall time in process and through the daemon.

Builds a store of ``n`` distinct memories (LoCoMo's turns, then seeded recombinations of two
turns, as the scale benchmark makes them) with ``chitta import``, then runs each command as
a user runs it — a new ``python -m chitta`` process, timed from spawn to exit — first with no
daemon (the command opens the store itself, loading the model where it embeds), then with a
daemon started on the home (the command forwards to its socket). Only ids and figures are
kept, never stored text or queries.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta.bench import environment
from chitta.bench.locomo import load
from chitta.bench.scale.measure import clean_env
from chitta.bench.scale.texts import base_turns, memory_texts, query_pool
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.daemon.launch import spawn_daemon, wait_for_daemon
from chitta.errors import BadArgument

REALM = "bench"
STORE = "default"
MODES = ("in_process", "daemon")
COMMANDS = ("show", "status", "recall", "export", "remember")
#: What each command runs, with the placeholders the results name instead of text.
SHAPES = {
    "baseline": ["--version"],
    "show": ["show", "ID"],
    "status": ["status", "--json"],
    "recall": ["recall", "QUERY", "--json"],
    "export": ["export", "-o", "FILE"],
    "remember": ["remember", "TEXT", "--json"],
}
#: The daemon method each command forwards to.
METHODS = {"show": "get_memory", "status": "memory_status", "recall": "recall",
           "export": "export_memories", "remember": "remember"}  # fmt: skip
COMMAND_TIMEOUT_S = 600.0
START_TIMEOUT_S = 300.0  # a first open of a big store builds its indexes


def run(
    workdir: Path, data: Path, *, n: int, runs: int, tick: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """The figures of one run: the store built under ``workdir``, then every command
    ``runs`` times in each mode."""
    if n < 10 or not 1 <= runs <= 50:
        raise BadArgument(f"--n must be at least 10 and --runs between 1 and 50, got {n}, {runs}")
    home = workdir / "home"
    if (home / f"{STORE}.db").exists():
        raise BadArgument(f"{home} already holds a store; name an empty --workdir")
    dataset = load(data)
    turns = base_turns(dataset)
    # The n stored texts, then 2 * runs more for `remember` (distinct from the stored ones).
    texts = memory_texts(turns, n + 2 * runs)
    queries = query_pool(dataset)
    if len(queries) < 2 * runs:
        raise BadArgument(f"{data} has fewer than {2 * runs} distinct questions")
    load_before = environment.loadavg()
    tick("importing")
    store = _build(workdir, home, texts[:n])
    env = clean_env() | {"CHITTA_HOME": str(home), "CHITTA_STORE": STORE, "CHITTA_REALM": REALM}
    # One untimed export: it names a memory for `show`, and reads the store once so the
    # first timed mode does not pay for a cold page cache the second would not.
    ids = workdir / "ids.jsonl"
    _call(["export", "-o", str(ids)], env, home)
    store["show_id"] = _first_memory_id(ids)
    ids.unlink()  # exports hold the text; the store already keeps it, the run leaves no copy
    extra = iter(texts[n:])
    asks = iter(queries)
    figures: dict[str, dict[str, Any]] = {c: {} for c in ("baseline", *COMMANDS)}
    deduplicated = dict.fromkeys(MODES, 0)
    daemon_start_s, served = None, {}
    for mode in MODES:
        proc = None
        if mode == "daemon":
            tick("starting the daemon")
            settings = Settings(home=home, store=STORE)
            started = time.perf_counter()
            proc, offset = spawn_daemon(settings)  # its output goes to the daemon's log
            wait_for_daemon(settings, proc, offset, timeout_s=START_TIMEOUT_S)
            daemon_start_s = round(time.perf_counter() - started, 2)
        elif daemon_answers(Settings(home=home, store=STORE).socket_path):
            raise BadArgument(f"a daemon already serves {home}; stop it first")
        try:
            for command in ("baseline", *COMMANDS):
                tick(f"{mode}: {command}")
                times = []
                for _ in range(runs):
                    argv = _argv(command, store["show_id"], workdir / f"export-{mode}.jsonl",
                                 asks, extra)  # fmt: skip
                    done = _call(argv, env, home)
                    times.append(done["ms"])
                    if command == "remember":
                        deduplicated[mode] += bool(json.loads(done["stdout"]).get("deduplicated"))
                figures[command][mode] = _summary(times)
            if proc is not None:
                # What the daemon served, by its own count: proof the commands went through
                # it, and its own time per request beside the client's wall time.
                with DaemonClient(settings.socket_path) as client:
                    served = client.call("memory_status")["daemon"]["methods"]
        finally:
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=120)
            (workdir / f"export-{mode}.jsonl").unlink(missing_ok=True)
    return {
        "store": store,
        "daemon_start_s": daemon_start_s,
        "loadavg_before": load_before,
        "loadavg_after": environment.loadavg(),
        "commands": {c: {**f, "ratio": _ratio(f)} for c, f in figures.items()},
        "remember_deduplicated": deduplicated,
        "daemon_methods": served,
    }


def _build(workdir: Path, home: Path, texts: list[str]) -> dict[str, Any]:
    """The store under ``home`` from ``texts`` through ``chitta import``; its figures."""
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / "memories.jsonl"
    with source.open("w", encoding="utf-8") as fh:
        for text in texts:
            fh.write(json.dumps({"kind": "insight", "content": text, "realm": REALM}) + "\n")
    env = clean_env() | {"CHITTA_HOME": str(home), "CHITTA_STORE": STORE}
    done = _call(["import", str(source), "--json"], env, workdir)
    source.unlink()  # the text stays out of what the run leaves behind
    report = json.loads(done["stdout"])
    imported = report["imported"]["memories"]
    if imported != len(texts):
        raise BadArgument(f"imported {imported} of {len(texts)} memories "
                          f"({report['bad_lines']} bad lines)")  # fmt: skip
    return {"memories": imported, "import_s": round(done["ms"] / 1000, 1)}


def _argv(command: str, show_id: str, export_to: Path, asks: Any, extra: Any) -> list[str]:
    words = {"ID": show_id, "FILE": str(export_to)}
    if command == "recall":
        words["QUERY"] = next(asks)
    if command == "remember":
        words["TEXT"] = next(extra)
    return [words.get(w, w) for w in SHAPES[command]]


def _call(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run ``python -m chitta ARGV``: its wall time in ms (spawn to exit) and its stdout."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "chitta", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)  # fmt: skip
    ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        # The command's words may hold text: name only the command and its error's last line.
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1][:200]
        raise BadArgument(f"`chitta {argv[0]}` exited with {done.returncode}: {last}")
    return {"ms": ms, "stdout": done.stdout}


def _first_memory_id(path: Path) -> str:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            if record.get("type") == "memory":
                return record["id"]
    raise BadArgument(f"the export at {path} holds no memory")


def _summary(times: list[float]) -> dict[str, Any]:
    return {"median_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1),
            "runs_ms": [round(t, 1) for t in times]}  # fmt: skip


def _ratio(figures: dict[str, Any]) -> float | None:
    """In-process median over the daemon's: how many times faster through the daemon."""
    daemon = figures.get("daemon", {}).get("median_ms")
    return round(figures["in_process"]["median_ms"] / daemon, 2) if daemon else None


def markdown(record: dict[str, Any]) -> str:
    """The table for docs/benchmarks.md."""
    store = record["store"]
    start = record["daemon_start_s"]
    load_before, load_after = record["loadavg_before"], record["loadavg_after"]
    lines = [
        f"`{record['command']}` at commit `{(record['commit'] or 'unknown')[:12]}`: "
        f"{store['memories']:,} memories (imported in {store['import_s']} s), "
        f"{record['settings']['runs']} runs per command and mode; daemon start {start} s; "
        f"load average {_load(load_before)} before, {_load(load_after)} after.",
        "",
        "| command | in process: median / min ms | through the daemon: median / min ms "
        "| in process ÷ daemon | the daemon's own p50 ms |",
        "|---|---|---|---|---|",
    ]
    for name, f in record["commands"].items():
        shape = "`python -m chitta --version` (reference)" if name == "baseline" else (
            f"`chitta {' '.join(SHAPES[name])}`")  # fmt: skip
        a, b = f["in_process"], f["daemon"]
        own = record["daemon_methods"].get(METHODS.get(name, ""), {}).get("p50_ms")
        lines.append(f"| {shape} | {a['median_ms']:,.0f} / {a['min_ms']:,.0f} | "
                     f"{b['median_ms']:,.0f} / {b['min_ms']:,.0f} | {f['ratio']}× | "
                     f"{'–' if own is None else f'{own:.1f}'} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _load(values: list[float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in values) if values else "unknown"
