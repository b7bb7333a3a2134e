"""The daemon's HTTP face measured (issue 23): REST recall against the socket's on the same
store, and the memory browser's search page with 100 hits in a real headless chromium.

    PYTHONPATH=src python benchmarks/http_face.py benchmarks/results/http.json [--queries 100]

- **REST against the socket.** One daemon (`chitta serve --http`) over LoCoMo's first
  conversation (its turns as memories of one realm); its first ``--queries`` questions recalled
  (hybrid, limit 10) through a kept-open socket connection (DaemonClient) and through a
  kept-open HTTP connection (``POST /api/recall`` with the token), each question by both, the
  order alternating, three rounds after a warm-up: the median and p95 of each, client-side,
  the JSON decoded.
- **The search page with 100 hits.** Headless chromium logged in: the page's own load (the
  navigation's ``loadEventEnd``), and from the search's submit to its 100 hits drawn (each
  with its lane bars), ten times each.

Not part of chitta; the figures are in docs/benchmarks.md ("The HTTP face").
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chitta.bench import environment
from chitta.bench.browser import log_in, open_browser
from chitta.bench.locomo import load
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, daemon_answers

REALM = "locomo"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def figures(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values), 2), "p95_ms": percentile(values, 0.95),
            "n": len(values)}  # fmt: skip


def start(home: Path) -> tuple[subprocess.Popen, str]:
    """The daemon serving HTTP on a port the system picks, and its URL (from its status)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHITTA_")}
    env["CHITTA_HOME"] = str(home)
    env["CHITTA_UPKEEP"] = "0"  # nothing of the daemon's own in the measured time
    proc = subprocess.Popen([sys.executable, "-m", "chitta", "serve", "--http", "127.0.0.1:0"],
                            env=env, stderr=subprocess.DEVNULL)  # fmt: skip
    socket = Settings(home=home).socket_path
    deadline = time.monotonic() + 120
    while not daemon_answers(socket):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("the daemon did not start")
        time.sleep(0.1)
    with DaemonClient(socket) as client:
        return proc, client.call("memory_status")["daemon"]["http"]


def rest_recall(conn: http.client.HTTPConnection, token: str, query: str) -> dict:
    body = json.dumps({"query": query, "realm": REALM, "limit": 10})
    conn.request("POST", "/api/recall", body=body, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})  # fmt: skip
    reply = conn.getresponse()
    data = json.loads(reply.read())
    if reply.status != 200:
        raise RuntimeError(f"REST recall failed: {data}")
    return data


def compare(home: Path, url: str, questions: list[str], rounds: int) -> dict:
    token = (home / "http-token").read_text().strip()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    socket_ms: list[float] = []
    rest_ms: list[float] = []
    with DaemonClient(Settings(home=home).socket_path) as client:
        for q in questions[:10]:  # warm-up: the model, the indexes, the connection
            client.call("recall", query=q, realm=REALM, limit=10)
            rest_recall(conn, token, q)
        for r in range(rounds):
            for i, q in enumerate(questions):
                order = ("socket", "rest") if (i + r) % 2 == 0 else ("rest", "socket")
                for way in order:
                    t = time.perf_counter()
                    if way == "socket":
                        client.call("recall", query=q, realm=REALM, limit=10)
                        socket_ms.append((time.perf_counter() - t) * 1000)
                    else:
                        rest_recall(conn, token, q)
                        rest_ms.append((time.perf_counter() - t) * 1000)
    conn.close()
    return {"socket": figures(socket_ms), "rest": figures(rest_ms),
            "rest_over_socket_p50_ms": round(statistics.median(rest_ms)
                                             - statistics.median(socket_ms), 2)}  # fmt: skip


def page(home: Path, url: str, query: str, runs: int) -> dict:
    token = (home / "http-token").read_text().strip()
    load_ms, search_ms = [], []
    with tempfile.TemporaryDirectory() as tmp, open_browser(Path(tmp) / "profile") as browser:
        log_in(browser, url, token)
        for run in range(runs):
            browser.goto(f"{url}/?run={run}#/search")  # a new navigation each time
            browser.wait_for("document.getElementById('q')")
            load_ms.append(
                browser.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
            )
        for _ in range(runs):
            browser.evaluate(
                f"document.getElementById('q').value = {json.dumps(query)};"
                "document.getElementById('limit').value = '100';"
                "document.getElementById('realm').value = 'locomo';"
                "window.__t = performance.now(); document.getElementById('hits') && "
                "document.getElementById('hits').remove();"
                "document.querySelector('form.search').requestSubmit(); true")  # fmt: skip
            browser.wait_for(
                "document.getElementById('hits') && "
                "document.querySelectorAll('#hits > li').length === 100",
                60,
            )
            search_ms.append(browser.evaluate("performance.now() - window.__t"))
        if browser.messages:
            raise RuntimeError(f"the page logged errors: {browser.messages}")
    return {"page_load": figures(load_ms), "search_100_hits": figures(search_ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page-runs", type=int, default=10)
    args = parser.parse_args()
    started = time.time()
    conv = load(environment.default_locomo()).conversations[0]
    questions = [q.question for q in conv.questions][: args.queries]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "h"
        proc, url = start(home)
        try:
            with DaemonClient(Settings(home=home).socket_path) as client:
                for turn in conv.turns:
                    client.call("remember", content=turn.memory_text, realm=REALM,
                                kind="episode", session=f"s{turn.session}")  # fmt: skip
            latency = compare(home, url, questions, args.rounds)
            browsing = page(home, url, "what did they talk about", args.page_runs)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    record = {
        "benchmark": "http",
        "command": "PYTHONPATH=src python benchmarks/http_face.py " + " ".join(sys.argv[1:]),
        "commit": environment.git_commit(),
        "machine": {**environment.machine(), "loadavg": environment.loadavg()},
        "store": {"conversation": conv.sample_id, "memories": len(conv.turns)},
        "recall": latency,
        "browser": browsing,
        "wall_s": round(time.time() - started, 1),
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: record[k] for k in ("store", "recall", "browser")}, indent=1))


if __name__ == "__main__":
    main()
