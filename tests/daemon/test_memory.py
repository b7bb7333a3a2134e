"""After a burst of large requests the daemon gives its memory back: its resident size returns
to within RSS_MARGIN_MB of what it was before (docs/daemon.md, "Limits")."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from chitta.daemon import memory
from chitta.daemon.client import DaemonClient
from chitta.validate import MAX_QUERY_CHARS

#: How far above its steady resident size a daemon may stay once a burst is over, in MB.
RSS_MARGIN_MB = 100
#: Large requests at once, and how many each client sends (distinct, so no cache answers).
CLIENTS = 10
EACH = 3
#: Under the 32,768 characters of the largest memory (a remember) and the query limit (a recall).
LARGE_CHARS = 30_000
QUERY_CHARS = MAX_QUERY_CHARS


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _text(rng: random.Random, chars: int) -> str:
    words = ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
             for _ in range(chars // 7 + 1))  # fmt: skip
    return " ".join(words)[:chars]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_rss_returns_near_its_steady_size_after_large_requests(home: Path, launch) -> None:
    proc = launch(home)
    sock = home / "chitta.sock"
    rng = random.Random(3)
    with DaemonClient(sock) as client:  # the steady state: a store in use
        for i in range(30):
            client.call("remember", content=f"note {i}: {_text(rng, 300)}", realm="r")
        for i in range(20):
            client.call("recall", query=f"note {i} {_text(rng, 40)}", realm="r")
    time.sleep(2.0)  # quiet
    steady = _rss_mb(proc.pid)
    burst = [[_text(rng, LARGE_CHARS) for _ in range(EACH)] for _ in range(CLIENTS)]

    def send(texts: list[str]) -> None:
        with DaemonClient(sock, timeout_s=120) as client:
            for i, text in enumerate(texts):
                if i == 0:
                    client.call("remember", content=text, realm="big")
                else:
                    client.call("recall", query=text[:QUERY_CHARS], realm="r")

    clients = [threading.Thread(target=send, args=(t,)) for t in burst]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    peak = _rss_mb(proc.pid)
    deadline = time.monotonic() + 15  # the daemon gives memory back once it is quiet
    while (now := _rss_mb(proc.pid)) > steady + RSS_MARGIN_MB and time.monotonic() < deadline:
        time.sleep(0.5)
    assert now <= steady + RSS_MARGIN_MB, f"steady {steady:.0f} MB, peak {peak:.0f}, now {now:.0f}"


def test_the_memory_helpers_act_on_glibc_and_do_nothing_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    glibc = memory._glibc() is not None
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert memory.limit_arenas() is glibc  # mallopt took it where there is glibc
    released = memory.trim()
    assert isinstance(released, bool) and (glibc or released is False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False  # the environment's choice stands


def test_settle_freezes_a_large_old_generation_once() -> None:
    import gc

    held = [{"n": n} for n in range(50_000)]  # long-lived objects, as a held code index
    gc.collect()  # they are old now
    before = gc.get_freeze_count()
    try:
        assert memory.settle(threshold=10**9) is False  # not that many
        assert gc.get_freeze_count() == before
        assert memory.settle(threshold=len(held)) is True
        assert gc.get_freeze_count() >= before + len(held)
        assert len(gc.get_objects(generation=2)) < len(held)  # the collector walks them no more
        assert memory.settle(threshold=len(held)) is False  # nothing new to settle
    finally:
        gc.unfreeze()
    assert held[-1] == {"n": 49_999}
