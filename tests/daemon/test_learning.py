"""The resonance learner in a real daemon: recalls and feedback from clients teach it, `chitta
learn` shows and resets it, its state outlives the daemon, and CHITTA_LEARN=0 turns it off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chitta.daemon.client import DaemonClient

TEXTS = ("Deploys go through ops/deploy.sh with AWS_PROFILE=staging",
         "The billing service runs on port 8443", "The cache TTL for sessions is 300 seconds",
         "Our CI runs on GitHub Actions with a 90 minute limit")  # fmt: skip
QUERIES = ("how do deploys work", "which port does billing use", "what is the cache ttl")


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


def teach(socket: Path) -> None:
    with DaemonClient(socket) as client:
        for text in TEXTS:
            client.call("remember", content=text, realm="work")
        for query in QUERIES:
            hits = client.call("recall", query=query, realm="work", limit=3)["hits"]
            client.call("strengthen", id=hits[0]["id"])
            client.call("weaken", id=hits[-1]["id"])


def test_clients_feedback_teaches_the_daemon_and_it_outlives_a_restart(
    home: Path, launch, daemon_store, daemon_socket: Path, daemon_env: dict[str, str]
) -> None:
    proc = launch(home, store=daemon_store)
    teach(daemon_socket)
    shown = cli(daemon_env, "learn", "--realm", "work")
    assert shown.returncode == 0, shown.stderr
    assert "learning on, 6 feedback events" in shown.stdout
    assert "balance" in shown.stdout and "preset 0.5" in shown.stdout
    assert "deploy" not in shown.stdout  # parameters and counts, never a memory's text
    with DaemonClient(daemon_socket) as client:
        trace = client.call("recall", query=QUERIES[0], realm="work", trace=True)["trace"]
    assert trace["policy"]["learner"]["sampled"] is True
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    launch(home, store=daemon_store)
    again = json.loads(cli(daemon_env, "learn", "--realm", "work", "--json").stdout)
    assert again["events"] == 6 and "hybrid" in again["strategies"]
    reset = json.loads(cli(daemon_env, "learn", "--realm", "work", "--reset", "--json").stdout)
    assert reset["forgotten_events"] == 6 and reset["events"] == 0


def test_learning_off_in_the_daemon(
    home: Path, launch, daemon_store, daemon_socket: Path, daemon_env: dict[str, str]
) -> None:
    launch(home, store=daemon_store, env={"CHITTA_LEARN": "0"})
    teach(daemon_socket)
    shown = cli(daemon_env, "learn", "--realm", "work")
    assert "learning off (CHITTA_LEARN=0), 0 feedback events" in shown.stdout
