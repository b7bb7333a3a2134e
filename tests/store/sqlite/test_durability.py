"""Crash safety: a writer killed with SIGKILL loses nothing it acknowledged, and leaves
no half-written memory behind."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chitta.config import Settings
from chitta.store.sqlite import Store

pytestmark = pytest.mark.slow

# Each child draws its sentences from this vocabulary, so no two are near-duplicates.
REMEMBER_LOOP = """
import random, sys
from pathlib import Path
from chitta.api import Chitta
from chitta.config import Settings

words = (
    "amber basil cedar delta ember fjord garnet harbor island jungle kettle lantern meadow "
    "nectar orchid pepper quartz raven saffron timber umber velvet walnut yarrow zephyr "
    "anchor bridge canyon dune engine falcon glacier hammer igloo jasper kayak ladder "
    "magnet needle oyster parrot quiver rocket summit tunnel violin wagon yeti zinc"
).split()
home, tag = Path(sys.argv[1]), sys.argv[2]
rng = random.Random(tag)
with Chitta.open(Settings(home=home)) as chitta:
    i = 0
    while True:
        text = f"Note {i} of {tag}: " + " ".join(rng.sample(words, 10))
        remembered = chitta.remember(text, tags=[tag])
        print(remembered.id, flush=True)
        i += 1
"""

# Large transactions make it likely that the kill lands inside one.
BATCH_LOOP = """
import sys, time
from pathlib import Path
from chitta.api import Chitta
from chitta.config import Settings
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source

home, tag, size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
with Chitta.open(Settings(home=home)) as chitta:
    texts = [f"Batch fact number {i} about the {tag} warehouse inventory" for i in range(size)]
    embedded = chitta.embedder.embed(texts[:16]).vectors
    vectors = [embedded[i % len(embedded)] for i in range(size)]
    batch = 0
    while True:
        now = int(time.time() * 1000)
        label = f"{tag}b{batch}"
        items = [
            (Memory(id=new_id(now), kind=Kind.INSIGHT, content=f"{label}: {text}", realm="work",
                    agent_id="", channel="", tags=(label,), source=Source(), created_at=now,
                    updated_at=now, event_time=None, confidence=Confidence.initial(0.01),
                    strength=0.7, tier="hot"), vector)
            for text, vector in zip(texts, vectors)
        ]
        chitta.store.insert(items)
        print(label, flush=True)
        batch += 1
"""


def run_and_kill(code: str, args: list[str], rng: random.Random, window: tuple[float, float]):
    """Start a child, SIGKILL it a random time after its first ack; return every ack line."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acks: list[str] = []
    first = threading.Event()

    def read() -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            if line.endswith("\n"):  # a line cut by the kill was never acknowledged
                acks.append(line.strip())
                first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not first.wait(60):
            child.kill()
            pytest.fail(f"child never acknowledged a write: {child.stderr.read()}")  # type: ignore[union-attr]
        time.sleep(rng.uniform(*window))
        assert child.poll() is None, child.stderr.read()  # type: ignore[union-attr]
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(30)
        reader.join(30)
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL
    return acks


def check_whole(store: Store) -> None:
    """The file is intact and every memory is complete: its vector and its FTS entry."""
    assert store.integrity_check() == "ok"
    orphans = store._query(
        "SELECT count(*) FROM memories m LEFT JOIN embeddings e ON e.memory_id = m.id "
        "WHERE e.memory_id IS NULL"
    )[0][0]
    assert orphans == 0
    with store.transaction() as conn:
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")


def test_sigkill_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    """Five writers in a row on one store, each killed at a random moment."""
    settings = Settings(home=tmp_path / "home")
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    acked_total: set[str] = set()
    for round_ in range(5):
        tag = f"round{round_}"
        acks = run_and_kill(REMEMBER_LOOP, [str(settings.home), tag], rng, (0.3, 1.5))
        acked = set(acks)
        assert acks, f"seed {seed}"
        with Store(settings.store_path, create=False) as store:  # the lock died with the child
            for memory_id in acked:
                assert store.get(memory_id).tags == (tag,), f"seed {seed}, {tag}"
            check_whole(store)
            stored = {m.id for m in store.iter_memories() if m.tags == (tag,)}
            # At most the one write in flight at the kill made it in without its ack.
            assert acked <= stored, f"seed {seed}"
            assert len(stored - acked) <= 1, f"seed {seed}"
            acked_total |= acked
            assert acked_total <= {m.id for m in store.iter_memories()}


def test_sigkill_mid_transaction_leaves_whole_batches(tmp_path: Path) -> None:
    """A batch insert is all or nothing, acknowledged or not."""
    settings = Settings(home=tmp_path / "home")
    size = 300
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    for round_ in range(3):
        tag = f"r{round_}"
        acks = run_and_kill(BATCH_LOOP, [str(settings.home), tag, str(size)], rng, (0.05, 0.4))
        with Store(settings.store_path, create=False) as store:
            check_whole(store)
            per_batch: dict[str, int] = {}
            for m in store.iter_memories():
                if m.tags[0].startswith(f"{tag}b"):
                    per_batch[m.tags[0]] = per_batch.get(m.tags[0], 0) + 1
            assert set(acks) <= set(per_batch), f"seed {seed}"
            assert len(set(per_batch) - set(acks)) <= 1, f"seed {seed}"
            assert all(n == size for n in per_batch.values()), f"seed {seed}: {per_batch}"
