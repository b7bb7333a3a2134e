"""Reads cannot starve writes: writes have a worker of their own, and reads past the bound of
their queue are told the daemon is busy rather than left to wait out their deadline."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

from chitta.daemon.client import DaemonClient
from chitta.errors import ChittaError
from chitta.validate import MAX_QUERY_CHARS

#: Readers at once: far more than the read workers and their queue hold.
READERS = 80
#: The longest query accepted: real work for a read (the keyword lane matches every distinct
#: word), with no cache to answer it.
QUERY_CHARS = MAX_QUERY_CHARS
DEADLINE_S = 3


def _text(rng: random.Random, chars: int) -> str:
    words = ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
             for _ in range(chars // 7 + 1))  # fmt: skip
    return " ".join(words)[:chars]


def test_writes_are_answered_while_slow_reads_fill_every_worker(home: Path, serve_as) -> None:
    serve_as(home, "--deadline", str(DEADLINE_S), env={"CHITTA_DAEMON_WORKERS": "2"})
    sock = home / "chitta.sock"
    rng = random.Random(17)
    with DaemonClient(sock) as client:
        for i in range(40):
            client.call("remember", content=f"note {i}: {_text(rng, 200)}", realm="r")
    queries = [[_text(rng, QUERY_CHARS) for _ in range(3)] for _ in range(READERS)]
    stop = threading.Event()
    read_errors: list[str] = []

    def read(mine: list[str]) -> None:
        while not stop.is_set():
            for query in mine:
                try:
                    with DaemonClient(sock, timeout_s=60) as client:
                        client.call("recall", query=query, realm="r", limit=20)
                except ChittaError as exc:
                    read_errors.append(exc.code)

    readers = [threading.Thread(target=read, args=(q,), daemon=True) for q in queries]
    for reader in readers:
        reader.start()
    time.sleep(1.5)  # every worker taken, the queue full
    write_errors = []
    writes = [f"write {i}: {_text(rng, 120)}" for i in range(10)]  # distinct: none folded
    try:
        for content in writes:
            try:
                with DaemonClient(sock, timeout_s=60) as client:
                    client.call("remember", content=content, realm="w")
            except ChittaError as exc:
                write_errors.append(f"{exc.code}: {exc}")
    finally:
        stop.set()
        for reader in readers:
            reader.join(timeout=60)
    assert write_errors == []  # each answered before the deadline, none timed out
    # The reads were really queued past the bound: some were told busy (not left to time out).
    assert "daemon_busy" in read_errors
    assert set(read_errors) <= {"daemon_busy", "daemon_timeout"}  # none refused as too large
    with DaemonClient(sock) as client:
        assert client.call("memory_status")["per_realm"]["w"] == 10
