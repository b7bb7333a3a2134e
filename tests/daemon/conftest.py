"""A real daemon process in a temporary CHITTA_HOME, and raw socket helpers."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "h"


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
def module_home(tmp_path_factory: pytest.TempPathFactory, daemons) -> Iterator[Path]:
    """One running daemon for a whole test module; its CHITTA_HOME (the socket is in it).
    For modules whose tests only read, or write to realms of their own."""
    home = tmp_path_factory.mktemp("h")
    proc = daemons.start(home)
    try:
        yield home
    finally:
        daemons.stop(proc)
