"""The daemon as clients meet it: a real process, a real socket, the real model."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chitta.bench.fault import Served
from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.errors import DaemonTimeout

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def test_remember_recall_and_status_through_the_socket(daemon: Path) -> None:
    with DaemonClient(daemon) as client:
        stored = client.call("remember", content=WAL, realm="demo", kind="wisdom")
        assert stored["ok"] and not stored["deduplicated"]
        found = client.call("recall", query="SQLite WAL crash recovery", realm="demo")
        assert found["hits"][0]["id"] == stored["id"]
        status = client.call("memory_status")
        assert status["per_realm"] == {"demo": 1}
        assert status["daemon"]["pid"] > 0 and status["daemon"]["requests"] >= 2
        assert set(status["daemon"]["methods"]) >= {"remember", "recall"}
        assert status["calibration"]["source"] == "default"
        traced = client.call("recall", query="SQLite WAL crash recovery", realm="demo",
                             trace=True)  # fmt: skip
        assert traced["trace"]["trace_version"] == 1
        assert traced["trace"]["order"]["returned"] == [stored["id"]]
        assert "trace" not in found and found["confidence"]["band"] in ("KNOWN", "UNKNOWN")


def test_the_socket_is_owner_only_in_an_owner_only_folder(daemon: Path) -> None:
    assert stat.S_ISSOCK(os.stat(daemon).st_mode)
    assert os.stat(daemon).st_mode & 0o777 == 0o600
    assert os.stat(daemon.parent).st_mode & 0o777 == 0o700


def test_a_second_serve_on_the_store_says_already_running(
    daemon: Path, daemon_env, daemon_store
) -> None:
    second = subprocess.run([sys.executable, "-m", "chitta", "serve"], capture_output=True,
                            text=True, timeout=60, env=daemon_env)  # fmt: skip
    assert second.returncode == 4
    # SQLite: the instance lock on the file names its holder. A database has no such lock
    # (many daemons may serve one), so a second daemon in the same home is refused at its socket.
    assert ("already answers on" if daemon_store else "already running (pid") in second.stderr
    with DaemonClient(daemon) as client:  # the first one is untouched
        assert client.call("memory_status")["ok"]


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"{not json\n", protocol.PARSE_ERROR),
        (b"[1, 2]\n", protocol.INVALID_REQUEST),
        (b'{"method": "recall", "id": 1}\n', protocol.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "recall", "id": 1, "extra": 1}\n',
         protocol.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "recall", "params": [1], "id": 1}\n',
         protocol.INVALID_PARAMS),
        (b'{"jsonrpc": "2.0", "method": "nope", "id": 1}\n', protocol.METHOD_NOT_FOUND),
        (b'{"jsonrpc": "2.0", "method": "recall", "params": {"query": 5}, "id": 1}\n',
         protocol.INVALID_PARAMS),
        (b'{"jsonrpc": "2.0", "method": "recall", "params": {"query": "q", "bogus": 1}, '
         b'"id": 1}\n', protocol.INVALID_PARAMS),
        (b'{"jsonrpc": "2.0", "method": "recall", "params": {"query": "  "}, "id": 1}\n',
         protocol.INVALID_PARAMS),
        (b'{"jsonrpc": "2.0", "method": "forget", "params": {"id": "01NOPE"}, "id": 1}\n',
         protocol.CHITTA_ERROR),
        (b'\xff\xfe\n', protocol.PARSE_ERROR),
        (b"[" * 100_000 + b"\n", protocol.PARSE_ERROR),  # nested past the parser's recursion
    ],
)  # fmt: skip
def test_bad_frames_get_a_json_rpc_error_and_the_daemon_serves_on(raw, daemon, frame, code):
    (line,) = raw(frame)
    reply = json.loads(line)
    assert reply["error"]["code"] == code and reply["error"]["message"]
    with DaemonClient(daemon) as client:
        assert client.call("memory_status")["ok"]


def test_an_oversized_request_is_refused_and_its_connection_closed(raw, daemon) -> None:
    big = b'{"jsonrpc": "2.0", "method": "remember", "params": {"content": "'
    big += b"x" * (protocol.MAX_REQUEST_BYTES + 10) + b'"}, "id": 1}\n'
    lines = raw(big, expect=2)
    assert len(lines) == 1 and json.loads(lines[0])["error"]["code"] == protocol.TOO_LARGE
    with DaemonClient(daemon) as client:
        assert client.call("memory_status")["ok"]


def test_a_client_leaving_mid_request_does_not_disturb_others(daemon: Path) -> None:
    for partial in (b'{"jsonrpc": "2.0", "method": "rec', protocol.request_line(
            "recall", {"query": "anything at all"}, 1)):  # fmt: skip
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(daemon))
            s.sendall(partial)  # and hang up without reading
    with DaemonClient(daemon) as client:
        assert client.call("memory_status")["ok"]


def test_ten_thousand_generated_frames_get_errors_and_the_daemon_serves_on(daemon) -> None:
    rng = random.Random(7)
    pieces = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"jsonrpc", b"2.0", b"method", b"params",
              b"id", b"recall", b"null", b"1", b"-", b"\\", b" ", b"\xc3", b"\x00"]  # fmt: skip
    frames = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))).replace(b"\n", b"")
              + b"\n" for _ in range(10_000)]  # fmt: skip
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(str(daemon))
        reader = s.makefile("rb")
        sender = threading.Thread(target=s.sendall, args=(b"".join(frames),))
        sender.start()
        replies = 0
        blank = sum(1 for f in frames if not f.strip())
        for _ in range(len(frames) - blank):
            line = reader.readline()
            assert line, "the daemon closed the connection"
            assert "error" in json.loads(line) or "result" in json.loads(line)
            replies += 1
        sender.join()
    assert replies == len(frames) - blank
    with DaemonClient(daemon) as client:
        assert client.call("memory_status")["ok"]


def test_concurrent_clients_lose_no_acknowledged_write(daemon: Path) -> None:
    errors: list[BaseException] = []
    written: list[str] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        rng = random.Random(n)
        try:
            with DaemonClient(daemon) as c:
                for i in range(500):
                    roll = rng.random()
                    if roll < 0.2:
                        box = rng.randint(0, 10**9)
                        text = f"client {n} note {i}: the build on box {box} passed"
                        done = c.call("remember", content=text, realm=f"r{n % 3}")
                        with lock:
                            written.append(done["id"])
                    elif roll < 0.8:
                        c.call("recall", query=f"build on box {i}", realm=f"r{n % 3}", limit=5)
                    else:
                        c.call("memory_status")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(written) > 700  # acknowledged writes (near-duplicates return the kept id)
    with DaemonClient(daemon) as c:
        exported = c.call("export_memories")["jsonl"].splitlines()[1:]
        assert set(written) <= {json.loads(line)["id"] for line in exported}
        assert c.call("memory_status")["daemon"]["methods"]["remember"]["errors"] == 0


def test_kill_9_and_restart_loses_nothing_acknowledged(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    proc = launch(home, store=daemon_store)
    with DaemonClient(daemon_socket) as c:
        ids = [c.call("remember", content=f"acknowledged memory number {i} about kayaks",
                      realm="k")["id"] for i in range(30)]  # fmt: skip
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert daemon_socket.exists()  # left behind by the crash
    launch(home, store=daemon_store)  # replaces the stale socket
    with DaemonClient(daemon_socket) as c:
        exported = c.call("export_memories", realm="k")["jsonl"]
    kept = {json.loads(line)["id"] for line in exported.splitlines()[1:]}
    assert set(ids) <= kept


def test_a_request_over_the_deadline_is_answered_with_a_timeout(home: Path, launch) -> None:
    launch(home, "--deadline", "0.001")
    with DaemonClient(home / "chitta.sock") as c:
        with pytest.raises(DaemonError) as caught:
            c.call("remember", content="a memory that takes longer than a millisecond to embed")
        assert caught.value.rpc_code == protocol.TIMEOUT
        assert isinstance(caught.value, DaemonTimeout) and caught.value.exit_code == 4
    with DaemonClient(home / "chitta.sock") as c:  # still answering: a result or a timeout
        try:
            assert c.call("memory_status")["ok"]
        except DaemonError as again:
            assert again.rpc_code == protocol.TIMEOUT


def test_sigterm_removes_the_socket_and_keeps_the_data(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    proc = launch(home, store=daemon_store)
    with DaemonClient(daemon_socket) as c:
        c.call("remember", content=WAL, realm="demo")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not daemon_socket.exists()
    assert "stopped" in proc.stderr.read().decode()


def test_the_socket_s_missing_folders_are_made_owner_only(tmp_path: Path) -> None:
    """CHITTA_SOCKET_PATH in folders that are not there: each is made 0700, whatever the
    umask; the folder that was there is left as it was."""
    socket_path = tmp_path / "run" / "chitta" / "s.sock"
    tmp_path.chmod(0o755)
    daemon = Served(tmp_path / "h", socket=socket_path)
    old = os.umask(0)  # the daemon inherits it
    try:
        daemon.start()
    finally:
        os.umask(old)
    try:
        for folder in (tmp_path / "run", tmp_path / "run" / "chitta"):
            assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
        assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755
        assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
    finally:
        daemon.stop()
