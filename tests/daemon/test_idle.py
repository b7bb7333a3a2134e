"""A daemon with an idle exit stops by itself once no request came for a while, and only then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from chitta.daemon.client import DaemonClient
from chitta.store.ids import new_id

WORDS = ["river", "kayak", "paddle", "current", "eddy", "portage", "canoe", "rapids",
         "gorge", "bank", "shore", "delta"]  # fmt: skip


def wait_for_exit(proc, timeout: float = 30.0) -> tuple[int, str]:
    code = proc.wait(timeout=timeout)
    return code, proc.stderr.read().decode()


def status(home: Path, *args: str) -> str:
    """`chitta status ARGS` in ``home`` (through its daemon when one runs): its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-m", "chitta", "status", *args],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_idle_daemon_stops_by_itself_and_removes_its_socket(home: Path, launch) -> None:
    proc = launch(home, "--idle-exit", "2")
    sock = home / "chitta.sock"
    assert json.loads(status(home, "--json"))["daemon"]["idle_exit_s"] == 2
    assert "stops after 2 s without a request" in status(home)
    with DaemonClient(sock) as client:
        assert client.call("memory_status")["daemon"]["idle_exit_s"] == 2
    last = time.monotonic()
    code, said = wait_for_exit(proc)
    assert code == 0 and time.monotonic() - last >= 2
    assert not sock.exists()
    assert "chitta serve: stopped after 2 s without a request" in said


def test_a_daemon_that_keeps_getting_requests_stays(home: Path, launch) -> None:
    proc = launch(home, "--idle-exit", "2")
    until = time.monotonic() + 6  # three idle periods
    while time.monotonic() < until:
        with DaemonClient(home / "chitta.sock") as client:  # a new connection each time
            assert client.call("memory_status")["ok"]
        assert proc.poll() is None
        time.sleep(0.5)
    code, said = wait_for_exit(proc)  # and once they stop, so does it
    assert code == 0 and "without a request" in said


def test_a_long_request_is_not_cut(home: Path, launch) -> None:
    proc = launch(home, "--idle-exit", "1")
    with DaemonClient(home / "chitta.sock") as client:
        client.call("remember", content="a seed memory about kayaks and rivers", realm="k")
        header, record = client.call("export_memories", realm="k")["jsonl"].splitlines()[:2]
        base = json.loads(record)
        lines = [header]
        for i in range(100):  # long texts: embedding them takes seconds
            text = " ".join(f"{WORDS[(i * j) % len(WORDS)]}{j}" for j in range(120))
            lines.append(json.dumps({**base, "id": new_id(), "content": f"memory {i}: {text}"}))
        started = time.monotonic()
        done = client.call("import_memories", jsonl="\n".join(lines) + "\n", into="big")
        took = time.monotonic() - started
        assert done["imported"]["memories"] == 100
        assert took > 1.5, f"the import took {took:.1f} s: too short to test the idle exit"
        assert client.call("memory_status")["per_realm"]["big"] == 100  # the same connection
    code, said = wait_for_exit(proc)
    assert code == 0 and "stopped after 1 s without a request" in said


def test_plain_serve_has_no_idle_exit(home: Path, launch) -> None:
    proc = launch(home)
    assert json.loads(status(home, "--json"))["daemon"]["idle_exit_s"] is None
    assert "stops after" not in status(home)
    time.sleep(1.5)
    assert proc.poll() is None


def test_idle_exit_zero_means_never(home: Path, launch) -> None:
    launch(home, "--idle-exit", "0")
    with DaemonClient(home / "chitta.sock") as client:
        assert client.call("memory_status")["daemon"]["idle_exit_s"] is None


def test_a_bad_idle_setting_is_refused_naming_it(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env.update(CHITTA_HOME=str(home), CHITTA_DAEMON_IDLE_S="half an hour")
    done = subprocess.run([sys.executable, "-m", "chitta", "mcp"], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 2
    assert "CHITTA_DAEMON_IDLE_S" in done.stderr and not (home / "chitta.sock").exists()
