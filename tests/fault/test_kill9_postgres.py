"""SIGKILL of a daemon mid-write on PostgreSQL, while another daemon serves the same database:
every write the killed one acknowledged is in the database, none is half-written (a memory
without its vector or keyword postings, or the reverse), the integrity check says ok, the
other daemon serves on through every kill (the dead one's locks went with its sessions), and
the killed one starts again."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

from chitta.bench import hostile
from chitta.bench.fault import Served
from chitta.config import Settings
from chitta.daemon.client import DaemonClient

TRIALS = 3
#: Rows one table holds without their partner in another: each should be 0.
HALF_WRITTEN = {
    "memories without a vector": "SELECT count(*) FROM memories m WHERE NOT EXISTS "
    "(SELECT 1 FROM embeddings e WHERE e.memory_id = m.id)",
    "vectors without a memory": "SELECT count(*) FROM embeddings e WHERE NOT EXISTS "
    "(SELECT 1 FROM memories m WHERE m.id = e.memory_id)",
    "memories without postings": "SELECT count(*) FROM memories m WHERE NOT EXISTS "
    "(SELECT 1 FROM kw_postings p WHERE p.memory_id = m.id)",
    "postings without a memory": "SELECT count(*) FROM kw_postings p WHERE NOT EXISTS "
    "(SELECT 1 FROM memories m WHERE m.id = p.memory_id)",
    "rows stamped past the generation": "SELECT count(*) FROM memories, generation "
    "WHERE gen > generation.n",
}


def served(home: Path, url: str) -> Served:
    return Served(
        home, env={"CHITTA_STORE": url}, socket=Settings(home=home, store=url).socket_path
    )


def half_written(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {what: conn.execute(sql).fetchone()[0] for what, sql in HALF_WRITTEN.items()}


def test_a_daemon_killed_mid_write_leaves_the_database_whole_and_the_other_serving(
    pg_url: str, tmp_path: Path, serves_normally
) -> None:
    a, b = served(tmp_path / "a", pg_url), served(tmp_path / "b", pg_url)
    a.start()
    b.start()
    seed = int.from_bytes(os.urandom(4), "big")
    rng, acks, tally = random.Random(seed), hostile.Acks(), hostile.Tally()
    stop = threading.Event()

    def client(daemon: Served, n: int) -> None:
        c = hostile.MixedClient(daemon.socket, f"k{n}", random.Random(seed + n), acks, tally)
        while not stop.is_set():
            if c.step().endswith(("unavailable", "broken_reply")):
                time.sleep(0.02)  # A is being restarted
        c.close()

    # Two clients stream writes to A; one writes through B all along.
    threads = [threading.Thread(target=client, args=(d, n)) for n, d in enumerate((a, a, b))]
    for t in threads:
        t.start()
    try:
        for trial in range(TRIALS):
            written = acks.writes
            deadline = time.monotonic() + 60
            while acks.writes < written + 8 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 0.8))
            a.kill9()
            # B writes at once: A's sessions (and any write lock they held) are gone.
            with DaemonClient(b.socket, timeout_s=30) as client_b:
                done = client_b.call("remember", content=f"B after kill {trial} of seed {seed}",
                                     realm="after-kill")  # fmt: skip
                acks.remember(done["id"], "after-kill", fresh=not done.get("deduplicated"))
            assert half_written(pg_url) == dict.fromkeys(HALF_WRITTEN, 0), f"seed {seed}"
            a.start()
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    serves_normally(a)
    serves_normally(b)
    assert hostile.internal_error_count({"valid": tally.as_dict()}) == 0, tally.as_dict()
    lost = hostile.lost_writes(pg_url, acks)  # type: ignore[arg-type] - a URL opens the database
    assert lost == hostile.NOTHING_LOST, f"seed {seed}: {lost} of {acks.writes} acknowledged"
    assert half_written(pg_url) == dict.fromkeys(HALF_WRITTEN, 0), f"seed {seed}"
    assert acks.remembered and acks.triplets, tally.as_dict()
    a.stop()
    b.stop()
