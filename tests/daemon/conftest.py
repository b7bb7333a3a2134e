"""A real daemon process in a temporary CHITTA_HOME, and raw socket helpers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chitta.daemon.client import daemon_answers

START_TIMEOUT_S = 60.0


def start_daemon(home: Path, *args: str) -> subprocess.Popen:
    """`chitta serve` in ``home``, returned once its socket answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "chitta", "serve", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chitta serve exited: {proc.stderr.read().decode()}")
        if daemon_answers(home / "chitta.sock"):
            return proc
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("chitta serve did not start in time")


def stop_daemon(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "h"


@pytest.fixture
def launch() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start daemons (``launch(home, *args)``); every one still running is stopped after."""
    started: list[subprocess.Popen] = []

    def start(home: Path, *args: str) -> subprocess.Popen:
        proc = start_daemon(home, *args)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        stop_daemon(proc)


@pytest.fixture
def daemon(home: Path, launch) -> Path:
    """A running daemon; its socket path."""
    launch(home)
    return home / "chitta.sock"


@pytest.fixture
def raw(daemon: Path) -> Callable[[bytes], list[bytes]]:
    """Send raw bytes on a new connection; the response lines until the daemon closes or
    falls silent."""

    def send(data: bytes, expect: int = 1) -> list[bytes]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(str(daemon))
            s.sendall(data)
            reader = s.makefile("rb")
            lines = []
            for _ in range(expect):
                line = reader.readline()
                if not line:
                    break
                lines.append(line)
            return lines

    return send


@pytest.fixture(scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One running daemon for a whole test module; its CHITTA_HOME (the socket is in it).
    For modules whose tests only read, or write to realms of their own."""
    home = tmp_path_factory.mktemp("h")
    proc = start_daemon(home)
    try:
        yield home
    finally:
        stop_daemon(proc)
