"""The fault-injection suite's parts: real daemons (one per module where the tests share it),
small tmpfs mounts that fill, read-only mounts, and a check that a daemon still serves."""

from __future__ import annotations

import contextlib
import os
import subprocess
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


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``tmpfs("16m")``: a new tmpfs of that size, unmounted after the test; the test is
    skipped, saying why, where this process may not mount one."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"fs{len(mounted)}"
        where.mkdir()
        done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where))
        if done.returncode != 0:
            pytest.skip(
                f"cannot mount a tmpfs here: {done.stderr.strip()} (needs root and "
                "CAP_SYS_ADMIN; tests/store covers the same errors with max_page_count)"
            )
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """``read_only(mount_point)``: remount it read-only (or, where this process may not
    mount, take the write bits off its folders and files); skipped when it can write there
    all the same (root through mode bits)."""
    chmodded: list[tuple[Path, int]] = []

    def make(folder: Path) -> None:
        if os.path.ismount(folder) and _mount("-o", "remount,ro", str(folder)).returncode == 0:
            return
        for path in [folder, *folder.rglob("*")]:
            chmodded.append((path, path.stat().st_mode & 0o7777))
            path.chmod(0o500 if path.is_dir() else 0o400)
        probe = folder / ".probe"
        try:
            probe.touch()
        except OSError:
            return
        probe.unlink()
        pytest.skip("this process writes through mode bits and may not remount read-only")

    yield make
    for path, mode in reversed(chmodded):
        with contextlib.suppress(OSError):
            path.chmod(mode)
