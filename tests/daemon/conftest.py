"""A real daemon process in a temporary CHITTA_HOME, and raw socket helpers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chitta.config import Settings
from chitta.daemon.client import daemon_answers


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "h"


@pytest.fixture
def daemon_store(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The store this test's daemons serve, on this test's backend: None (the home's SQLite
    file) or a fresh database's URL. Asking for it runs the test on both backends."""
    return request.getfixturevalue("pg_url") if backend == "postgresql" else None


@pytest.fixture
def daemon_socket(home: Path, daemon_store: str | None) -> Path:
    """Where the daemon of ``daemon_store`` in ``home`` listens."""
    return Settings(home=home, store=daemon_store or "default").socket_path


@pytest.fixture
def daemon_env(home: Path, daemon_store: str | None) -> dict[str, str]:
    """The environment a `chitta` client of ``daemon_store`` in ``home`` runs with: this
    process's, without CHITTA_* and CC_SOUL_* variables, with CHITTA_HOME (and CHITTA_STORE
    for a database)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    if daemon_store:
        env["CHITTA_STORE"] = daemon_store
    return env


@pytest.fixture
def daemon(home: Path, launch, daemon_store: str | None, daemon_socket: Path) -> Path:
    """A running daemon on this test's backend; its socket path."""
    launch(home, store=daemon_store)
    return daemon_socket


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
def module_home(tmp_path_factory: pytest.TempPathFactory, daemons) -> Iterator[Path]:
    """One running daemon for a whole test module; its CHITTA_HOME (the socket is in it).
    For modules whose tests only read, or write to realms of their own."""
    home = tmp_path_factory.mktemp("h")
    proc = daemons.start(home)
    try:
        yield home
    finally:
        daemons.stop(proc)


@pytest.fixture
def serve_as(daemons) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start `chitta serve ARGS` in a home with more say than ``launch``: ``env`` adds
    variables (CHITTA_* among them), ``preexec`` runs in the child before it starts (a
    resource limit). Returned once the socket answers; stopped after the test. Its output
    goes to ``<home>-serve.log`` beside the home, as ``launch``'s (``proc.stderr`` reads
    it; a failure shows its end)."""
    started: list[subprocess.Popen] = []

    def start(home: Path, *args: str, env: dict[str, str] | None = None,
              preexec: Callable[[], None] | None = None) -> subprocess.Popen:  # fmt: skip
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith(("CHITTA_", "CC_SOUL_"))}  # fmt: skip
        environ.update(env or {}, CHITTA_HOME=str(home))
        proc = daemons.popen_logged([sys.executable, "-m", "chitta", "serve", *args],
                                    home.parent / f"{home.name}-serve.log", env=environ,
                                    preexec_fn=preexec)  # fmt: skip
        started.append(proc)
        deadline = time.monotonic() + 60
        while not daemon_answers(home / "chitta.sock"):
            assert proc.poll() is None, f"chitta serve exited: {daemons.said(proc)}"
            assert time.monotonic() < deadline, f"chitta serve did not start: {daemons.said(proc)}"
            time.sleep(0.1)
        return proc

    yield start
    for proc in started:
        daemons.stop(proc)
