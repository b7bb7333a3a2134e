"""`chitta bench daemon`: recall through the daemon's socket, alone and under 8 clients.

Starts `chitta serve` on an existing store (for example one `chitta bench scale --workdir`
left behind), then asks LoCoMo's questions as recalls through the socket: first one client,
one request at a time (latency as a client sees it: framing, JSON and the socket included),
then ``clients`` clients at once (throughput, and latency under that load), then the prompt
hook as Claude Code runs it (a new process per prompt: wall time from start to exit). The
daemon is stopped with SIGTERM at the end. Only ids and figures are kept, never stored text.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from chitta.bench.locomo import load
from chitta.bench.scale.measure import timed
from chitta.bench.scale.settings import BenchFailed
from chitta.bench.score import summary_ms
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.daemon.launch import spawn_daemon, wait_for_daemon
from chitta.errors import BadArgument

START_TIMEOUT_S = 300.0  # a first open of a big store builds its indexes


def run(
    home: Path,
    store: str,
    realm: str,
    data: Path,
    *,
    queries: int,
    clients: int,
    per_client: int,
    hooks: int = 20,
) -> dict[str, Any]:
    """The figures of one daemon run over the store at ``home``."""
    if not (home / f"{store}.db").is_file():
        raise BadArgument(f"no store {store!r} under {home}; run `chitta bench scale "
                          "--workdir DIR` first and point --home at DIR/n<N>/home")  # fmt: skip
    questions = [q.question for q in load(data).questions][: max(queries, clients * per_client)]
    settings = Settings(home=home, store=store)
    path = settings.socket_path
    # A daemon already serving the store is measured as it is, and left running.
    running = daemon_answers(path)
    started = time.perf_counter()
    proc = None
    if not running:
        proc, offset = spawn_daemon(settings)  # output goes to the daemon's log, not a pipe
        wait_for_daemon(settings, proc, offset, timeout_s=START_TIMEOUT_S)
    start_s = time.perf_counter() - started
    try:
        with DaemonClient(path) as client:
            # At once, while the daemon may still be warming up.
            first_recall_s, _ = timed(lambda: client.call("recall", query=questions[0],
                                                          realm=realm))  # fmt: skip
            first_s = time.perf_counter() - started
            warmup = None if running else _warmed_up(client)
            size = sum(client.call("memory_status")["per_realm"].values())
            single = []
            for q in questions[:queries]:
                t = time.perf_counter()
                client.call("recall", query=q, realm=realm)
                single.append((time.perf_counter() - t) * 1000)
        load_ms, wall = _concurrent(path, realm, questions, clients, per_client)
        hook_ms = _hook_runs(home, store, realm, questions[:hooks])
        with DaemonClient(path) as client:
            errors = sum(m["errors"] for m in client.call("memory_status")["daemon"]["methods"]
                         .values())  # fmt: skip
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
    return {
        "memories": size,
        "daemon": "already running" if running else "started",
        "daemon_start_s": None if running else round(start_s, 2),
        # From the spawn to the first recall's answer, asked the moment the socket answered
        # (None for a daemon already running), and that recall's own time.
        "first_answer_s": None if running else round(first_s, 3),
        "first_recall_ms": round(first_recall_s * 1000, 1),
        "warmup": warmup,
        "single_client_ms": summary_ms(single),
        "concurrent": {
            "clients": clients,
            "requests": len(load_ms),
            "throughput_per_s": round(len(load_ms) / wall, 1),
            "latency_ms": summary_ms(load_ms),
        },  # fmt: skip
        "hook_prompt_wall_ms": summary_ms(hook_ms),
        "errors": errors,
    }


def _warmed_up(client: DaemonClient) -> dict[str, Any]:
    """The daemon's warm-up once it has ended (its state, and the milliseconds of each
    index and of the whole)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while (warmup := client.call("memory_status")["daemon"]["warmup"])["state"] == "warming":
        if time.monotonic() > deadline:
            raise BenchFailed(f"the daemon's warm-up did not end in {START_TIMEOUT_S:.0f} s")
        time.sleep(0.05)
    return warmup


def _hook_runs(home: Path, store: str, realm: str, prompts: list[str]) -> list[float]:
    """Wall time of `chitta hook prompt` from process start to exit, one prompt each."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    # The diagnostics (stderr) say whether it recalled; a session per prompt, so that none
    # is held back as shown already (docs/hooks.md).
    env |= {"CHITTA_HOME": str(home), "CHITTA_STORE": store, "CHITTA_HOOK_REALM": realm,
            "CHITTA_ADMIT_DEBUG": "1"}  # fmt: skip
    times = []
    for i, prompt in enumerate(prompts):
        event = json.dumps({"prompt": prompt, "session_id": f"bench-{i}", "cwd": str(home)})
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "chitta", "hook", "prompt"], input=event,
                              capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
        times.append((time.perf_counter() - t) * 1000)
        if "memories admitted" not in done.stderr:  # a hook always exits 0: check its output
            said = (done.stdout + done.stderr).strip()[:200]
            raise BadArgument(f"the prompt hook did not recall: {said}")
    return times


def _concurrent(
    path: Path, realm: str, questions: list[str], clients: int, per_client: int
) -> tuple[list[float], float]:
    times: list[float] = []
    lock = threading.Lock()
    failures: list[BaseException] = []

    def client(n: int) -> None:
        mine = []
        try:
            with DaemonClient(path) as c:
                for i in range(per_client):
                    q = questions[(n * per_client + i) % len(questions)]
                    t = time.perf_counter()
                    c.call("recall", query=q, realm=realm)
                    mine.append((time.perf_counter() - t) * 1000)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            failures.append(exc)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return times, time.perf_counter() - started
