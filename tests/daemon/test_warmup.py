"""The daemon's warm-up (issue 24, instant start): a started daemon builds the store's
indexes in the background and says what each took; a recall that comes while it does gets
the answer it gets afterwards; a warm-up that cannot finish leaves the daemon serving."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import memory

from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.daemon.warmup import Warmup
from chitta.store.backends import open_store

WORDS = ("harbour", "lantern", "granite", "orchard", "violin", "compass", "meadow", "saffron")


def fill(home: Path, store: str | None, n: int) -> None:
    """``n`` memories in realm ``notes`` written straight to the store (random unit vectors:
    these tests are about which index answers, not about meaning)."""
    rng = np.random.default_rng(3)
    items = []
    for i in range(n):
        text = f"Note {i}: the {WORDS[i % 8]} by the {WORDS[(i * 3) % 8]} of lot {i % 41}"
        v = rng.normal(size=384).astype(np.float32)
        items.append((memory(text, realm="notes"), v / np.linalg.norm(v)))
    with open_store(store or str(Settings(home=home).store_path), home=home) as s:
        s.insert(items)


def warmup_of(socket: Path) -> dict:
    with DaemonClient(socket) as client:
        return client.call("memory_status")["daemon"]["warmup"]


def ready(socket: Path) -> dict:
    deadline = time.monotonic() + 60
    while (warm := warmup_of(socket))["state"] == "warming":
        assert time.monotonic() < deadline, warm
        time.sleep(0.05)
    return warm


def test_a_started_daemon_builds_its_indexes_and_says_what_each_took(
    home: Path, daemon_store: str | None, launch, daemon_socket: Path, daemon_env: dict
) -> None:
    fill(home, daemon_store, 300)
    launch(home, store=daemon_store)
    warm = ready(daemon_socket)
    assert warm["state"] == "ready"
    # The database answers vector and keyword search itself: only its mirrors are built.
    sqlite = ["terms", "keyword_rows", "corrections", "vectors", "keyword_lists"]
    parts = sqlite if daemon_store is None else [
        "terms", "corrections"]  # fmt: skip
    assert list(warm["parts_ms"]) == parts
    assert all(ms >= 0 for ms in warm["parts_ms"].values())
    assert warm["total_ms"] >= sum(warm["parts_ms"].values()) - 1
    shown = subprocess.run([sys.executable, "-m", "chitta", "status"], capture_output=True,
                           text=True, env=daemon_env, timeout=120)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "indexes: built in" in shown.stdout
    assert ("vectors" in shown.stdout) is (daemon_store is None)


@pytest.mark.sqlite_only
def test_a_recall_during_the_warm_up_gets_the_answer_it_gets_after(
    home: Path, launch, daemon_socket: Path
) -> None:
    fill(home, None, 6000)
    launch(home)
    asked = {"query": "the lantern by the granite of lot 7", "realm": "notes", "limit": 10}
    with DaemonClient(daemon_socket) as client:  # at once: the warm-up has just begun
        during = client.call("memory_status")["daemon"]["warmup"]["state"]
        first = client.call("recall", **asked)
    assert ready(daemon_socket)["state"] == "ready"
    with DaemonClient(daemon_socket) as client:
        after = client.call("recall", **asked)
    assert during in ("warming", "ready")
    assert [(h["id"], h["score"]) for h in first["hits"]] == [
        (h["id"], h["score"]) for h in after["hits"]]  # fmt: skip
    assert first["hits"]


def test_a_warm_up_that_fails_is_reported_and_its_end_counted(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"), home=tmp_path)
    store.close()  # a closed store: its first part fails
    ended = threading.Event()
    warm = Warmup(store, stopping=lambda: False, done=ended.set)
    warm.start()
    assert ended.wait(30)
    status = warm.status()
    assert status["state"] == "failed" and status["total_ms"] is not None
