"""SIGKILL at random moments, of a process writing in process and of the daemon while clients
write through it: every acknowledged write (memories, forgets, triplets) is in the store
afterwards, and its integrity check says ok. A few trials here; `chitta bench soak` runs many.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from chitta.bench import hostile
from chitta.bench.fault import Served, serve_environment

TRIALS = 3
#: A writer in process: remembers, forgets some of what it remembered, adds triplets; prints
#: each acknowledged write as "<kind> <id>" once its call has returned.
WRITER = """
import random, sys
from pathlib import Path
from chitta.api import Chitta
from chitta.config import Settings
from chitta.ops import OPERATIONS
from chitta.bench.hostile import WORDS

home, seed = Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
mine = []
with Chitta.open(Settings(home=home)) as chitta:
    for i in range(1_000_000):
        roll = rng.random()
        if roll < 0.6 or not mine:
            text = f"writer {seed} note {i}: " + " ".join(rng.sample(WORDS, 10))
            done = chitta.remember(text, realm="kill")
            mine.append(done.id)
            print("m", done.id, flush=True)
        elif roll < 0.75:
            memory_id = mine.pop(rng.randrange(len(mine)))
            chitta.forget(memory_id)
            print("f", memory_id, flush=True)
        else:
            a, b = rng.sample(WORDS, 2)
            done = OPERATIONS["add_triplet"].call(
                chitta, {"subject": a, "predicate": "near", "object": b, "realm": "kill"})
            print("t", done["triplet"]["id"], flush=True)
"""


def run_writer_and_kill(home: Path, seed: int, acks: hostile.Acks, rng: random.Random) -> None:
    """Start the writer, let it write for a random while after its first ack, SIGKILL it."""
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(home), str(seed)],
                             env=serve_environment(home), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    first = threading.Event()

    def read() -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            kind, ident = line.split()
            if kind == "m":
                acks.remember(ident, "kill", fresh=True)
            elif kind == "f":
                acks.forget(ident)
            else:
                acks.triplet(ident, "kill")
            first.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert first.wait(120), f"the writer never acknowledged a write: {child.stderr.read()}"  # type: ignore[union-attr]
        time.sleep(rng.uniform(0.1, 1.5))
        assert child.poll() is None, child.stderr.read()  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(30)
        reader.join(30)
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL


def test_a_writer_killed_at_random_moments_keeps_every_acknowledged_write(tmp_path: Path):
    home = tmp_path / "h"
    seed = int.from_bytes(os.urandom(4), "big")
    rng, acks = random.Random(seed), hostile.Acks()
    for trial in range(TRIALS):
        run_writer_and_kill(home, seed + trial, acks, rng)
        lost = hostile.lost_writes(home / "default.db", acks)
        assert lost == hostile.NOTHING_LOST, f"seed {seed}, trial {trial}: {lost}"
    assert acks.forgotten and acks.triplets, f"seed {seed}: not every kind was written"


def test_the_daemon_killed_at_random_moments_keeps_every_acknowledged_write(
    tmp_path: Path, serve: Callable[..., Served], serves_normally
) -> None:
    daemon = serve(tmp_path / "h")
    seed = int.from_bytes(os.urandom(4), "big")
    rng, acks, tally = random.Random(seed), hostile.Acks(), hostile.Tally()
    stop = threading.Event()

    def client(n: int) -> None:
        c = hostile.MixedClient(daemon.socket, f"k{n}", random.Random(seed + n), acks, tally)
        while not stop.is_set():
            if c.step().endswith(("unavailable", "broken_reply")):
                time.sleep(0.02)  # the daemon is being restarted
        c.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(TRIALS):
            written = acks.writes
            deadline = time.monotonic() + 60
            while acks.writes < written + 5 and time.monotonic() < deadline:
                time.sleep(0.05)  # some writes land on this daemon before it dies
            time.sleep(rng.uniform(0.0, 1.0))
            daemon.kill9()
            assert daemon.socket.exists()  # a crash leaves its socket behind
            daemon.start()  # which the next daemon replaces
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    serves_normally(daemon)
    assert hostile.internal_error_count({"valid": tally.as_dict()}) == 0, tally.as_dict()
    daemon.stop()
    lost = hostile.lost_writes(daemon.home / "default.db", acks)
    assert lost == hostile.NOTHING_LOST, f"seed {seed}: {lost} of {acks.writes} acknowledged"
    assert acks.remembered and acks.triplets, tally.as_dict()
