"""The fixtures that start daemons keep the daemon's output in a file: a daemon that says a lot
(here Python's import trace, about 150 KiB before it listens) must still serve, where a pipe
nobody reads would fill at 64 KiB and stop it, and the test would wait instead of failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.daemon.client import DaemonClient

LOUD = "PYTHONVERBOSE"  # every import, on stderr


def test_a_daemon_started_by_serve_as_that_says_a_lot_serves(home: Path, serve_as) -> None:
    proc = serve_as(home, env={LOUD: "1"})
    with DaemonClient(home / "chitta.sock", timeout_s=60) as client:
        assert client.call("memory_status")["ok"]
    assert "import" in proc.stderr.read().decode(errors="replace")  # what it said is kept


def test_a_daemon_started_by_launch_that_says_a_lot_serves(
    home: Path, launch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOUD, "1")  # the daemon's environment is this process's
    proc = launch(home)
    with DaemonClient(home / "chitta.sock", timeout_s=60) as client:
        assert client.call("memory_status")["ok"]
    assert "import" in proc.stderr.read().decode(errors="replace")
