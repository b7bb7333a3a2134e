"""Two stores open on one database, as two daemons on two machines: each one's in-process
indexes see the other's writes at once, and the write lock holds off the other's writers."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from chitta.embed.base import ModelIdentity
from chitta.store.kinds import Kind
from chitta.store.postgres import PostgresStore
from chitta.store.records import Scope, Triplet

MODEL = ModelIdentity("test-model", 4, "0" * 64)


def test_indexes_see_the_other_stores_writes(pg_url: str, tmp_path: Path, make_memory) -> None:
    with PostgresStore(pg_url, home=tmp_path / "a") as a, \
            PostgresStore(pg_url, home=tmp_path / "b") as b:  # fmt: skip
        a.bind_model(MODEL)
        b.bind_model(MODEL)
        # a builds every index first, empty.
        assert a.term_stats().size("work") == 0
        assert a.links().named_by("work", "paris") == frozenset()
        assert a.corrections().lookup({"deploy.sh"}, Scope("work")) == {}
        assert a.sparse_search(np.ones(4, np.float32) / 2, Scope("work"), 3) == []
        m = make_memory("Alice moved to Paris")
        fix = make_memory("Use `deploy.sh` instead", kind=Kind.CORRECTION)
        b.insert([(m, np.array([1, 0, 0, 0], np.float32)), (fix, None)])
        assert a.term_stats().df("work", "paris") == 1
        assert a.links().named_by("work", "paris") == {m.id}
        assert a.corrections().lookup({"deploy.sh"}, Scope("work")) == {fix.id: ("deploy.sh",)}
        assert a.sparse_search(np.array([1, 0, 0, 0], np.float32), Scope("work"), 3)[0][0] == m.id
        assert a.keyword_search(["paris"], Scope("work"), 3)[0][0] == m.id
        b.update(replace(m, content="Alice moved to Rome"))
        assert a.term_stats().df("work", "paris") == 0 and a.term_stats().df("work", "rome") == 1
        assert a.links().named_by("work", "rome") == {m.id}
        newer = make_memory("Use `ship.sh` now", kind=Kind.CORRECTION, supersedes=fix.id)
        b.insert([(newer, None)])
        assert set(a.corrections().lookup({"deploy.sh", "ship.sh"}, Scope("work"))) == {newer.id}
        before = a.links().generation("work")
        b.add_triplets([Triplet("T1", "work", "Alice", "likes", "Rome", 1.0, 0, None, m.id, 1)])
        assert a.links().generation("work") > before
        b.set_deleted(m.id, 5)
        assert a.sparse_search(np.array([1, 0, 0, 0], np.float32), Scope("work"), 3) == []
        assert a.links().named_by("work", "rome") == frozenset()
        b.purge(newer.id)
        assert a.corrections().lookup({"ship.sh"}, Scope("work")) == {}
        assert a.term_stats().size("work") == 1  # fix is left, live
        assert a.integrity_check() == "ok"


def test_the_write_lock_holds_off_the_other_stores_writers(
    pg_url: str, tmp_path: Path, make_memory
) -> None:
    with PostgresStore(pg_url, home=tmp_path / "a") as a, \
            PostgresStore(pg_url, home=tmp_path / "b") as b:  # fmt: skip
        landed = threading.Event()

        def write() -> None:
            b.insert([(make_memory("from b"), None)])
            landed.set()

        with a.write_lock():
            writer = threading.Thread(target=write)
            writer.start()
            time.sleep(0.3)
            assert not landed.is_set()  # waiting for the lock
            assert a.counts()["memories"] == 0
            a.insert([(make_memory("from a"), None)])  # the holder writes
        writer.join(10)
        assert landed.is_set() and b.counts()["memories"] == 2


def test_concurrent_writers_lose_nothing(pg_url: str, tmp_path: Path, make_memory) -> None:
    stores = [PostgresStore(pg_url, home=tmp_path / str(i)) for i in range(3)]
    try:

        def write(store: PostgresStore, n: int) -> None:
            for i in range(20):
                store.insert([(make_memory(f"writer {n} memory {i}"), None)])

        threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in stores:
            assert s.counts()["memories"] == 60
            assert s.term_stats().size("work") == 60
            assert s.keyword_frequencies(["memory"], "work") == (60, {"memory": 60})
    finally:
        for s in stores:
            s.close()
