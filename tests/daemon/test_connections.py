"""No client can take the daemon down by its connections: a cap, an idle timeout on every
request line, and accept() that rides out running short of file descriptors."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import threading
import time
from pathlib import Path

import pytest

from chitta.daemon.client import DaemonClient, DaemonError, daemon_answers
from chitta.daemon.connections import Acceptor, Admission
from chitta.errors import DaemonBusy

#: The file descriptor limit the flooded daemon runs under (it needs about 16 to serve).
LOW_NOFILE = 64


def _connect(path: Path, timeout: float = 5.0) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(path))
    return s


def _holding(path: Path) -> DaemonClient:
    """A client that has taken a place among the daemon's connections and keeps it (asked
    once: a place freed a moment later, by a start-up probe, counts as taken until then)."""
    client = DaemonClient(path, timeout_s=10, busy_retry_s=10)
    client.call("memory_status")
    return client


def _served(path: Path, within_s: float = 20.0) -> dict:
    """``memory_status`` from a fresh client, asked until it answers (a daemon backing off
    after a flood may take a moment)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with DaemonClient(path, timeout_s=10) as client:
                return client.call("memory_status")
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW_NOFILE, LOW_NOFILE))


def test_a_connection_flood_under_a_low_file_limit_does_not_stop_the_daemon(
    home: Path, serve_as
) -> None:
    proc = serve_as(home, preexec=_low_file_limit)
    sock = home / "chitta.sock"
    flood: list[socket.socket] = []
    try:
        for _ in range(4 * LOW_NOFILE):  # far more than the daemon has descriptors for
            # The backlog full, connecting fails here; the daemon must not.
            with contextlib.suppress(OSError):
                flood.append(_connect(sock, timeout=1.0))
        time.sleep(1.0)  # the daemon is at its cap, or meets EMFILE at accept(), meanwhile
        assert proc.poll() is None, proc.stderr.read().decode()
    finally:
        for s in flood:
            s.close()
    assert _served(sock)["ok"]
    assert sock.exists() and proc.poll() is None


def test_a_connection_over_the_cap_is_told_busy_and_closed(home: Path, launch) -> None:
    launch(home, "--max-connections", "3")
    sock = home / "chitta.sock"
    held = [_holding(sock) for _ in range(3)]
    try:
        with _connect(sock) as over:
            reader = over.makefile("rb")
            reply = json.loads(reader.readline())
            assert reader.readline() == b""  # and the daemon closed it
        assert reply["id"] is None
        assert reply["error"]["data"]["code"] == "daemon_busy"
        assert "limit of 3 open connections" in reply["error"]["message"]
        client = DaemonClient(sock, timeout_s=10)
        with client, pytest.raises(DaemonError) as caught:  # raised after a short retry
            client.call("memory_status")
        assert (caught.value.code, caught.value.exit_code) == ("daemon_busy", 4)
    finally:
        for s in held:
            s.close()
    assert _served(sock)["ok"]  # the held ones gone, there is room again


def test_an_idle_connection_is_closed_after_the_connection_idle_time(home: Path, launch) -> None:
    launch(home, "--connection-idle", "1")
    with _connect(home / "chitta.sock", timeout=15) as idle:
        started = time.monotonic()
        lines = idle.makefile("rb").readlines()  # until the daemon closes it
    assert time.monotonic() - started < 10
    assert len(lines) == 1 and "no complete request" in json.loads(lines[0])["error"]["message"]


def test_half_a_line_sent_slowly_is_cut_off_at_the_connection_idle_time(home: Path, launch) -> None:
    """A slowloris client: a byte now and then, never a newline. The limit is on the whole
    line, so trickling does not keep the connection."""
    launch(home, "--connection-idle", "1")
    with _connect(home / "chitta.sock", timeout=0.2) as slow:
        started = time.monotonic()
        closed = False
        for byte in b'{"jsonrpc": "2.0", "method": "memory_status", ' * 10:
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(4096) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue  # nothing to read yet: trickle on
            except OSError:
                closed = True
                break
        assert closed and time.monotonic() - started < 10


def test_a_client_idle_past_the_connection_idle_time_reconnects(home: Path, launch) -> None:
    launch(home, "--connection-idle", "1")
    with DaemonClient(home / "chitta.sock") as client:
        assert client.call("memory_status")["ok"]
        time.sleep(1.5)  # the daemon closes the connection meanwhile
        assert client.call("memory_status")["ok"]  # it was never read: sent again


def test_many_idle_connections_keep_few_threads(home: Path, launch) -> None:
    proc = launch(home, "--max-connections", "20")
    sock = home / "chitta.sock"
    assert _served(sock)["ok"]
    before = len(os.listdir(f"/proc/{proc.pid}/task"))  # the model's, numpy's, a worker
    held = []
    with contextlib.ExitStack() as stack:
        for _ in range(200):
            with contextlib.suppress(OSError):
                held.append(stack.enter_context(_connect(sock, timeout=1.0)))
        time.sleep(1.0)
        threads = len(os.listdir(f"/proc/{proc.pid}/task"))
    assert len(held) > 20 and threads <= before + 20  # a thread per connection admitted
    assert _served(sock)["ok"]


def test_a_busy_refusal_is_retried_until_a_place_frees(home: Path, launch) -> None:
    launch(home, "--max-connections", "1")
    sock = home / "chitta.sock"
    held = _holding(sock)  # the one place
    threading.Timer(0.3, held.close).start()
    with DaemonClient(sock, timeout_s=10) as client:  # refused at first, then let in
        assert client.call("memory_status")["ok"]


def test_accept_out_of_descriptors_refuses_the_waiting_client_and_serves_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(8)
        listener.settimeout(0.2)
        admission = Admission(10)
        acceptor = Acceptor(listener, admission)
        waiting = _connect(path)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        lowest = os.dup(0)  # the lowest free descriptor: a limit there makes the next EMFILE
        os.close(lowest)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (lowest, hard))
            assert acceptor.accept() is None  # not raised: refused, and the loop goes on
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        with waiting:
            reply = json.loads(waiting.makefile("rb").readline())
        assert reply["error"]["data"]["code"] == "daemon_busy"
        assert "file descriptors" in reply["error"]["message"]
        assert admission.refused == 1 and "accept() failed" in caplog.text
        with _connect(path):
            conn = acceptor.accept()  # descriptors again: served as usual
            assert conn is not None
            conn.close()
        acceptor.close()


def test_a_full_backlog_is_busy_not_absent(tmp_path: Path) -> None:
    """A listener that does not keep up: connecting fails with EAGAIN. The daemon is there
    (nothing to start in its place), and busy."""
    path = tmp_path / "s.sock"
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener,
        contextlib.ExitStack() as held,
    ):
        listener.bind(str(path))
        listener.listen(1)  # and never accepts
        with contextlib.suppress(BlockingIOError):
            for _ in range(100):
                held.enter_context(_connect(path, timeout=0.5))
        assert daemon_answers(path)
        with pytest.raises(DaemonBusy, match="try again"):
            DaemonClient(path, busy_retry_s=0.2)
