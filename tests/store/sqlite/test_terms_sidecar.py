"""The term statistics' sidecar (store/sqlite/terms_sidecar.py): a big store's word counts
are read back rather than counted when they match the file, counted anew when anything
changed them (in this process or another), never read from a damaged file, removed by a
purge, and owner-only."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from chitta.store.records import Memory
from chitta.store.sqlite import Store, terms_sidecar
from chitta.store.terms import TermStats

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)
WORDS = ["otter", "river", "stone", "kayak", "heron", "willow", "bridge", "mill", "İstanbul"]


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terms_sidecar, "MIN_MEMORIES", 20)


def counts(stats: TermStats) -> dict:
    return stats.snapshot()


def fill(path: Path, make_memory: MakeMemory, n: int = 40) -> list[Memory]:
    memories = [make_memory(f"{WORDS[i % 9]} by the {WORDS[(i * 4) % 9]} {i}",
                            realm="home" if i % 3 else "work") for i in range(n)]  # fmt: skip
    with Store(path) as store:
        store.insert([(m, None) for m in memories])
        store.term_stats()  # counted, and saved: the store is past the threshold
    return memories


def counted_afresh(path: Path) -> dict:
    """The counts of the file's live memories, read past the store's lock (read-only)."""
    stats = TermStats()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        stats.add_all(conn.execute("SELECT realm, content FROM memories WHERE deleted_at IS NULL"))
    finally:
        conn.close()
    return counts(stats)


def test_a_big_store_reads_its_counts_back_and_they_are_the_counted_ones(
    tmp_path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    fill(path, make_memory)
    sidecar = terms_sidecar.sidecar_path(path)
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600
    want = counted_afresh(path)
    monkeypatch.setattr(TermStats, "add_all", lambda *a: pytest.fail("counted, not read"))
    with Store(path) as store:
        assert counts(store.term_stats()) == want


def test_changes_in_this_process_are_saved_at_close(
    tmp_path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    memories = fill(path, make_memory)
    with Store(path) as store:
        store.term_stats()
        store.insert([(make_memory("a heron on the mill"), None)])
        store.set_deleted(memories[0].id, 1)
        store.update(replace(store.get(memories[1].id), content="the willow bent low"))
    want = counted_afresh(path)
    monkeypatch.setattr(TermStats, "add_all", lambda *a: pytest.fail("counted, not read"))
    with Store(path) as store:
        assert counts(store.term_stats()) == want


def test_a_change_the_sidecar_did_not_see_is_counted_anew(tmp_path: Path, make_memory) -> None:
    path = tmp_path / "store.db"
    memories = fill(path, make_memory)
    saved = terms_sidecar.sidecar_path(path).read_bytes()
    with Store(path) as store:  # another writer, stats never built: nothing saved at close
        store._conn.execute("UPDATE memories SET content = ? WHERE id = ?",
                            ("a kayak by the otter", memories[2].id))  # fmt: skip
        store._conn.commit()
    assert terms_sidecar.sidecar_path(path).read_bytes() == saved  # stale now
    with Store(path) as store:
        assert counts(store.term_stats()) == counted_afresh(path)


@pytest.mark.parametrize("damage", [b"", b"not a sidecar", "flip"])
def test_a_damaged_sidecar_is_counted_anew(tmp_path: Path, make_memory, damage) -> None:
    path = tmp_path / "store.db"
    fill(path, make_memory)
    sidecar = terms_sidecar.sidecar_path(path)
    data = bytearray(sidecar.read_bytes())
    if damage == "flip":
        data[-5] ^= 0x20
        sidecar.write_bytes(bytes(data))
    else:
        sidecar.write_bytes(damage)
    with Store(path) as store:
        assert counts(store.term_stats()) == counted_afresh(path)


def test_a_purge_removes_the_sidecar_and_the_next_one_lacks_its_words(
    tmp_path: Path, make_memory: MakeMemory
) -> None:
    path = tmp_path / "store.db"
    fill(path, make_memory)
    secret = make_memory("my token is zq9vcredential, please forget it")
    with Store(path) as store:
        store.insert([(secret, None)])
        store.term_stats()
    with Store(path) as store:
        assert store.term_stats().df("work", "zq9vcredential") == 1
        store.purge(secret.id)
        assert not terms_sidecar.sidecar_path(path).exists()
    assert b"zq9vcredential" not in terms_sidecar.sidecar_path(path).read_bytes()


def test_a_small_store_gets_no_sidecar(tmp_path: Path, make_memory) -> None:
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.insert([(make_memory("the otter and the river"), None)])
        assert store.term_stats().df("work", "otter") == 1
    assert not terms_sidecar.sidecar_path(path).exists()


def test_memories_stored_since_the_file_are_counted_in_not_all_counted_afresh(
    tmp_path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    fill(path, make_memory)
    saved = terms_sidecar.sidecar_path(path).read_bytes()
    with Store(path) as store:  # counts never built: the file is not saved again at close
        store.insert([(make_memory("a heron by the mill"), None),
                      (make_memory("kayak and otter", realm="home"), None)])  # fmt: skip
    assert terms_sidecar.sidecar_path(path).read_bytes() == saved
    want = counted_afresh(path)
    counted: list[int] = []
    real = TermStats.add_all

    def counting(self: TermStats, rows) -> None:
        rows = list(rows)
        counted.append(len(rows))
        real(self, rows)

    monkeypatch.setattr(TermStats, "add_all", counting)
    with Store(path) as store:
        assert counts(store.term_stats()) == want
    assert counted == [2]
    with Store(path) as store:  # saved again at close with them: read back as it is
        assert counts(store.term_stats()) == want
    assert counted == [2]


def test_an_older_sidecar_keeps_its_row_of_the_change_log(
    tmp_path: Path, make_memory: MakeMemory
) -> None:
    """The change log keeps the oldest row a saved sidecar still needs."""
    path = tmp_path / "store.db"
    fill(path, make_memory)
    stamp = terms_sidecar.saved_stamp(terms_sidecar.sidecar_path(path))
    with Store(path) as store:
        store.insert([(make_memory(f"otter {i}"), None) for i in range(5)])
    conn = sqlite3.connect(path)
    try:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM change_log ORDER BY seq")]
    finally:
        conn.close()
    assert stamp is not None and seqs[0] == stamp.seq and len(seqs) == 6
