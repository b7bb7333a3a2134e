"""The disk under the daemon fails while clients work: it fills up (a small tmpfs and a file
that takes the rest), or the store is read-only (a read-only remount). Writes are refused
with the store's own code, reads go on, nothing is an internal error, writes resume when
space returns and every acknowledged write is kept. (tests/store covers each write path on
its own, in process, through the CLI and through one daemon client.)"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chitta.bench import hostile
from chitta.bench.fault import Served, serve_environment

WRITES = ("remember", "forget", "add_triplet")
CLIENTS = 3


class Clients:
    """Ordinary clients writing from threads; their outcomes go to whichever tally is
    current, so each stage of a test is counted on its own."""

    def __init__(self, daemon: Served, acks: hostile.Acks) -> None:
        self.tally = hostile.Tally()
        self.stop = threading.Event()
        self.clients = [hostile.MixedClient(daemon.socket, f"d{n}", random.Random(n), acks,
                                            self.tally) for n in range(CLIENTS)]  # fmt: skip
        self.threads = [threading.Thread(target=self._run, args=(c,)) for c in self.clients]
        for t in self.threads:
            t.start()

    def _run(self, client: hostile.MixedClient) -> None:
        while not self.stop.is_set():
            client.step()
        client.close()

    def stage(self, seconds: float, until: Callable[[dict[str, int]], bool] = lambda _: True
              ) -> dict[str, int]:  # fmt: skip
        """Count the next ``seconds`` (longer, up to 30 s, until ``until`` holds)."""
        tally = self.tally = hostile.Tally()
        for c in self.clients:
            c.tally = tally
        started = time.monotonic()
        while time.monotonic() - started < seconds or (
            not until(tally.as_dict()) and time.monotonic() - started < 30
        ):
            time.sleep(0.05)
        return tally.as_dict()

    def end(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


def refused(outcomes: dict[str, int]) -> dict[str, int]:
    return {k: n for k, n in outcomes.items() if not k.endswith(":ok")}


def test_a_disk_that_fills_under_concurrent_writers_keeps_what_it_acknowledged(
    tmpfs, filler, serve: Callable[..., Served], tmp_path: Path, serves_normally
) -> None:
    disk = tmpfs("16m")
    daemon = serve(disk / "h", log=tmp_path / "serve.log")
    acks = hostile.Acks()
    clients = Clients(daemon, acks)
    try:
        before = clients.stage(1.0)
        filled = filler(disk)
        full = clients.stage(2.0, until=lambda t: bool(refused(t)))
        filled.unlink()
        # Requests sent while the disk was still full may be answered store_full after it:
        # a settling stage takes them (checked for internal errors only) before "after".
        settling = clients.stage(
            1.0, until=lambda t: any(k.split(":")[0] in WRITES and k.endswith(":ok") for k in t)
        )
        after = clients.stage(
            1.0, until=lambda t: any(k.split(":")[0] in WRITES and k.endswith(":ok") for k in t)
        )
    finally:
        clients.end()
    assert not refused(before), before
    stages = {"full": full, "settling": settling, "after": after}
    assert hostile.internal_error_count(stages) == 0, stages
    assert any("store_full" in k for k in full), f"nothing was refused on a full disk: {full}"
    for outcome in refused(full):
        assert outcome.split(":")[0] in WRITES and outcome.endswith(":store_full"), full
    assert not refused(after), after
    serves_normally(daemon)
    daemon.stop()
    assert hostile.lost_writes(daemon.home / "default.db", acks) == hostile.NOTHING_LOST


def test_a_read_only_store_under_concurrent_clients_refuses_only_the_writes(
    tmpfs, read_only, serve: Callable[..., Served], tmp_path: Path, serves_normally
) -> None:
    disk = tmpfs("16m")
    writer = serve(disk / "h", log=tmp_path / "serve.log")
    acks = hostile.Acks()
    clients = Clients(writer, acks)
    try:
        clients.stage(1.0)
    finally:
        clients.end()
    writer.stop()
    read_only(disk)
    daemon = serve(disk / "h", socket=tmp_path / "ro.sock", log=tmp_path / "serve-ro.log")
    clients = Clients(daemon, hostile.Acks())
    try:
        outcomes = clients.stage(2.0)
    finally:
        clients.end()
    assert hostile.internal_error_count({"ro": outcomes}) == 0, outcomes
    assert refused(outcomes), f"a read-only store took writes: {outcomes}"
    for outcome in refused(outcomes):
        assert outcome.split(":")[0] in WRITES and outcome.endswith(":store_read_only"), outcomes
    serves_normally(daemon)
    daemon.stop()
    assert hostile.lost_writes(disk / "h" / "default.db", acks) == hostile.NOTHING_LOST


@pytest.mark.parametrize("where", ["s.sock", "made/for/it/s.sock", "stale.sock"])
def test_serve_with_a_socket_folder_that_cannot_be_written_says_so(
    tmpfs, read_only, tmp_path: Path, where: str
) -> None:
    """The socket's folder on a read-only mount (the socket itself, its missing folders, or
    a dead daemon's socket that must go): one clear line naming the socket and the cause."""
    disk = tmpfs("1m")
    socket_path = disk / where
    if where == "stale.sock":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
            dead.bind(str(socket_path))  # left behind, as by a daemon killed with -9
    read_only(disk)
    env = serve_environment(tmp_path / "h", {"CHITTA_SOCKET_PATH": str(socket_path)})
    done = subprocess.run([sys.executable, "-m", "chitta", "serve"], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert str(socket_path) in lines[0] and "read-only" in lines[0].lower(), lines[0]
    assert "CHITTA_SOCKET_PATH" in lines[0], lines[0]
