"""Daemon start to first answer, from outside: spawn `chitta serve` on an existing home,
send one recall the moment the socket accepts, and time both from the spawn. Not part of
chitta; it speaks the socket's JSON-RPC by hand, so it measures any version of the daemon
(``PYTHONPATH`` picks the one that runs). Used for issue 24's "daemon start to first
answer" beside `chitta bench daemon`, which needs this version's status fields.

    python benchmarks/first_answer.py HOME REALM QUERY [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path


def ask(path: Path, method: str, params: dict) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(600)
        s.connect(str(path))
        s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                              "params": params}).encode() + b"\n")  # fmt: skip
        reply = json.loads(s.makefile("rb").readline())
    if "error" in reply:
        raise SystemExit(f"{method} failed: {reply['error']}")
    return reply["result"]


def once(home: Path, realm: str, query: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHITTA_")}
    env["CHITTA_HOME"] = str(home)
    path = home / "chitta.sock"
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "chitta", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        while True:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.connect(str(path))
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit("chitta serve exited") from None
                time.sleep(0.005)
        listening = time.perf_counter() - started
        hits = ask(path, "recall", {"query": query, "realm": realm})["hits"]
        answered = time.perf_counter() - started
        if not hits:
            raise SystemExit("the first recall found nothing")
        return {"listening_s": round(listening, 3), "first_answer_s": round(answered, 3)}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("home", type=Path)
    args.add_argument("realm")
    args.add_argument("query")
    args.add_argument("--runs", type=int, default=3)
    opts = args.parse_args()
    runs = [once(opts.home, opts.realm, opts.query) for _ in range(opts.runs)]
    print(json.dumps({"runs": runs, "first_answer_s_median": statistics.median(
        r["first_answer_s"] for r in runs)}))  # fmt: skip


if __name__ == "__main__":
    main()
