"""Connections that misbehave: a crowd of floods, slow, partial and malformed clients under a
low open-file limit, while ordinary clients write; clients that leave early. The daemon stays
up, keeps its socket, leaks no descriptor, loses no acknowledged write and serves a normal
client afterwards."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

from chitta.bench import hostile
from chitta.bench.fault import Served
from chitta.daemon.client import DaemonClient

#: The daemon's open-file limit in the crowd test: room to start and serve, little more.
LOW_NOFILE = 256


def crowd(daemon: Served, rng: random.Random, seconds: float) -> tuple[hostile.Acks, dict]:
    """Two ordinary clients writing while a flood past the file limit, slow clients, partial
    clients and malformed frames come and go; the acknowledged writes and every tally."""
    acks = hostile.Acks()
    tallies = {k: hostile.Tally() for k in ("valid", "flood", "slow", "partial", "frames")}
    clients = [hostile.MixedClient(daemon.socket, f"c{n}", random.Random(rng.random()), acks,
                                   tallies["valid"]) for n in range(2)]  # fmt: skip
    for c in clients:
        c.step()  # connected before the crowd comes
    stop = threading.Event()
    held: list = []

    def ordinary(c: hostile.MixedClient) -> None:
        while not stop.is_set():
            c.step()

    def hostile_ones() -> None:
        r = random.Random(rng.random())
        held.extend(hostile.flood(daemon.socket, LOW_NOFILE + 200, tallies["flood"]))
        held.extend(hostile.slow(daemon.socket, r, 30, tallies["slow"]))
        while not stop.is_set():
            hostile.partial(daemon.socket, r, tallies["partial"])
            hostile.send_malformed(daemon.socket, r, tallies["frames"], frames=5)

    threads = [threading.Thread(target=ordinary, args=(c,)) for c in clients]
    threads.append(threading.Thread(target=hostile_ones))
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    hostile.close_all(held)
    for c in clients:
        c.close()
    return acks, {k: v.as_dict() for k, v in tallies.items()}


def test_a_hostile_crowd_under_a_low_file_limit_leaves_the_daemon_serving(
    tmp_path: Path, serve: Callable[..., Served], serves_normally
) -> None:
    daemon = serve(tmp_path / "h", nofile=LOW_NOFILE)
    acks, tallies = crowd(daemon, random.Random(17), seconds=4.0)
    assert tallies["flood"].get("opened", 0) > 0, tallies["flood"]
    serves_normally(daemon)
    assert hostile.internal_error_count(tallies) == 0, tallies
    assert acks.writes > 0, tallies["valid"]
    daemon.stop()
    assert hostile.lost_writes(daemon.home / "default.db", acks) == hostile.NOTHING_LOST


def busy_every_worker(daemon: Served, n: int = 24) -> None:
    """Recalls from ``n`` clients at once: the worker pool grows to its size, and each worker
    opens its own read connection to the store (descriptors that stay, by design)."""

    def recall(i: int) -> None:
        with DaemonClient(daemon.socket, timeout_s=60) as client:
            client.call("recall", query=f"kayak number {i}", realm="warm")

    threads = [threading.Thread(target=recall, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)


def test_clients_that_leave_early_leave_no_descriptor_behind(shared: Served, serves_normally):
    busy_every_worker(shared)
    before = shared.figures()
    assert before is not None
    rng, tally = random.Random(5), hostile.Tally()
    for _ in range(60):
        hostile.partial(shared.socket, rng, tally)
    hostile.close_all(hostile.slow(shared.socket, rng, 20, tally))
    assert {"mid_line", "unread_reply", "mid_reply"} <= set(tally.as_dict()), tally.as_dict()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        now = shared.figures()
        assert now is not None, "the daemon exited"
        if now.open_fds <= before.open_fds + 2:
            break
        time.sleep(0.1)
    assert now.open_fds <= before.open_fds + 2, (before, now)
    serves_normally(shared)


def test_slow_clients_do_not_hold_up_an_ordinary_one(shared: Served, serves_normally) -> None:
    held = hostile.slow(shared.socket, random.Random(3), 50, hostile.Tally())
    try:
        with DaemonClient(shared.socket, timeout_s=30) as client:
            remembered = client.call("remember", content="the kayak is back in the boathouse",
                                     realm="slow")  # fmt: skip
            assert client.call("get_memory", id=remembered["id"])["memory"]["realm"] == "slow"
    finally:
        hostile.close_all(held)
    serves_normally(shared)
