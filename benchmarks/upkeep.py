"""What does the subconscious cost a daemon's clients? (issue 21, part 2)

    python benchmarks/upkeep.py OUT.json [--n 100000] [--seconds 60] [--rounds 3]

Builds a store of N memories a month old (LoCoMo's turns and their recombinations, as
``chitta bench scale`` makes them: the first 5,000 texts embedded by the model, the rest given
synthetic vectors near theirs), then starts real daemons on it, in turn with upkeep running
(its sweeps start at once: decay, then hygiene, both with work to do) and with upkeep off
(``--no-upkeep``), ``--rounds`` times each, alternating. Each daemon answers LoCoMo questions
from one client, one after another, through the socket, for ``--seconds``; the figures per
condition are the recall latency's p50 / p95 / p99, the daemon's whole CPU share over the
timed window (from /proc), and the worker's own share and work (its ``busy_s`` and steps from
``chitta status``). A copy of the store is made for each daemon, so each starts from the same
month-old state.

Not part of chitta; the figures are in docs/benchmarks.md ("The subconscious's cost").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from chitta.bench import environment, locomo
from chitta.bench.scale.texts import base_turns, memory_texts, query_pool
from chitta.bench.scale.vectors import synthetic_vectors, unit_rows
from chitta.config import EmbedSettings, Settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.embed.loader import build_embedder
from chitta.store.backends import open_store
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import DECAY_RATE, Kind
from chitta.store.records import Memory, Source

REALM = "bench"
EMBEDDED = 5_000  # texts embedded by the model; the rest get synthetic vectors near them
MONTH_MS = 30 * 86_400_000
TICKS = os.sysconf("SC_CLK_TCK")


def build(home: Path, n: int, texts: list[str]) -> Path:
    """A store of ``n`` episodes created a month ago; the SQLite file's path."""
    embedder = build_embedder(EmbedSettings())
    real = texts[: min(EMBEDDED, n)]
    base = np.concatenate([embedder.embed(real[i : i + 256]).vectors
                           for i in range(0, len(real), 256)])  # fmt: skip
    rest, _ = synthetic_vectors(base, n - len(real), np.random.default_rng(11))
    vectors = np.concatenate([base, unit_rows(rest)]) if len(rest) else base
    then = int(time.time() * 1000) - MONTH_MS
    conf = Confidence.initial(DECAY_RATE[Kind.EPISODE])
    path = Settings(home=home).store_path
    with open_store(str(path), home=home) as store:
        store.bind_model(embedder.identity())
        for start in range(0, n, 5000):
            items = []
            for i in range(start, min(n, start + 5000)):
                at = then + i
                m = Memory(id=new_id(at), kind=Kind.EPISODE, content=texts[i], realm=REALM,
                           agent_id="", channel="", tags=(), source=Source(session=f"s{i // 500}"),
                           created_at=at, updated_at=at, event_time=None, confidence=conf,
                           strength=0.7, tier="hot", decayed_at=at)  # fmt: skip
                items.append((m, vectors[i]))
            store.insert(items)
    return path


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def one_daemon(store: Path, upkeep: bool, queries: list[str], seconds: float) -> dict[str, Any]:
    """Serve a copy of ``store`` and time ``queries`` against it, over and over, for
    ``seconds``."""
    with tempfile.TemporaryDirectory(prefix="chitta-upkeep-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        shutil.copy(store, Settings(home=home).store_path)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHITTA_")}
        env.update(CHITTA_HOME=str(home), CHITTA_UPKEEP_START_S="0")
        args = [sys.executable, "-m", "chitta", "serve"] + ([] if upkeep else ["--no-upkeep"])
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        sock = Settings(home=home).socket_path
        try:
            while not daemon_answers(sock):
                if proc.poll() is not None:
                    raise SystemExit("the daemon did not start")
                time.sleep(0.1)
            with DaemonClient(sock) as client:
                for q in queries[:20]:  # warm: the model, the indexes, the first graph
                    client.call("recall", query=q, realm=REALM, record=False)
                before = client.call("memory_status")["daemon"]["upkeep"]
                cpu0, t0 = cpu_s(proc.pid), time.perf_counter()
                ms: list[float] = []
                while time.perf_counter() - t0 < seconds:
                    started = time.perf_counter()
                    client.call("recall", query=queries[len(ms) % len(queries)], realm=REALM,
                                record=False)  # fmt: skip
                    ms.append((time.perf_counter() - started) * 1000)
                wall = time.perf_counter() - t0
                cpu = cpu_s(proc.pid) - cpu0
                after = client.call("memory_status")["daemon"]["upkeep"]
        finally:
            proc.terminate()
            proc.wait(timeout=120)
    q = statistics.quantiles(ms, n=100)
    steps = {name: t["steps"] - before["tasks"][name]["steps"]
             for name, t in after["tasks"].items()}  # fmt: skip
    return {"upkeep": upkeep, "recalls": len(ms), "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(q[94], 2), "p99_ms": round(q[98], 2), "wall_s": round(wall, 2),
            "daemon_cpu_share": round(cpu / wall, 3),
            "upkeep_share": round((after["busy_s"] - before["busy_s"]) / wall, 4),
            "upkeep_steps": steps, "tasks": after["tasks"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = locomo.load(environment.default_locomo())
    texts = memory_texts(base_turns(data), args.n)
    queries = query_pool(data)
    with tempfile.TemporaryDirectory(prefix="chitta-upkeep-build-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        started = time.perf_counter()
        store = build(home, args.n, texts)
        built_s = time.perf_counter() - started
        load = [environment.loadavg()]
        runs = []
        for _ in range(args.rounds):
            for upkeep in (True, False):
                runs.append(one_daemon(store, upkeep, queries, args.seconds))
                load.append(environment.loadavg())
                print(json.dumps({k: v for k, v in runs[-1].items() if k != "tasks"}))
    summary = {}
    for upkeep in (True, False):
        mine = [r for r in runs if r["upkeep"] is upkeep]
        summary["running" if upkeep else "paused"] = {
            key: round(statistics.median(r[key] for r in mine), 3)
            for key in ("p50_ms", "p95_ms", "p99_ms", "daemon_cpu_share", "upkeep_share")
        }
    out = {"command": " ".join(sys.argv), "n": args.n, "seconds": args.seconds,
           "build_s": round(built_s, 1), "summary": summary, "runs": runs,
           "commit": environment.git_commit(), "machine": environment.machine(),
           "loadavg": load}  # fmt: skip
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
