"""The fault-injection suite's parts: real daemons (one per module where the tests share it),
small tmpfs mounts that fill, read-only mounts, and a check that a daemon still serves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chitta.bench.fault import Served
from chitta.daemon.client import DaemonClient


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One daemon for the whole module (its tests write to realms of their own)."""
    daemon = Served(tmp_path_factory.mktemp("f") / "h").start()
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve(home=None, *args, nofile=None, socket=None)``: a started daemon, stopped after
    the test whatever it did."""
    started: list[Served] = []

    def start(home: Path | None = None, *args: str, **options: object) -> Served:
        daemon = Served(home or tmp_path / "h", *args, **options)  # type: ignore[arg-type]
        started.append(daemon)
        return daemon.start()

    yield start
    for daemon in started:
        daemon.stop()


@pytest.fixture(scope="session")
def serves_normally() -> Callable[[Served], None]:
    """``serves_normally(daemon)``: assert the process is up, its socket is there, and a new
    client gets an ordinary answer."""

    def check(daemon: Served) -> None:
        assert daemon.alive(), f"the daemon exited ({daemon.returncode()}): {daemon.said()}"
        assert daemon.socket.exists(), "the daemon's socket file is gone"
        with DaemonClient(daemon.socket, timeout_s=60) as client:
            assert client.call("memory_status")["ok"]

    return check
