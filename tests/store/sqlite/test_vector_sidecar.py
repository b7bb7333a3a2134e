"""The vectors' sidecar (store/sqlite/vector_sidecar.py): a big store's vectors are mapped
from the file rather than read from the store when the vector log says the file is the
store's, the log's later changes replayed — whoever made them — and the result is the index
a read of the store gives; a damaged, foreign or stale file is never used; a purge and a
restored backup remove it; owner-only."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from tests.store.sqlite.test_ann import MODEL, OTHER_MODEL, assert_same_hits, unit_rows

from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store, ann_sidecar, vector_sidecar
from chitta.store.sqlite.indexes import Indexes
from chitta.store.vectors import VectorIndex

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)
REALMS = ("work", "home")


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_sidecar, "MIN_VECTORS", 50)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def open_store(path: Path, *, hnsw_min: int = 0, model=MODEL) -> Store:
    store = Store(path, hnsw_min=hnsw_min)
    store.bind_model(model)
    return store


def fill(store: Store, make_memory: MakeMemory, n: int, seed: int) -> list[Memory]:
    rng = np.random.default_rng(seed)
    memories = [make_memory(f"memory {seed}-{i}", realm=REALMS[i % 2], agent_id=f"a{i % 3}")
                for i in range(n)]  # fmt: skip
    store.insert(list(zip(memories, unit_rows(rng, n), strict=True)))
    return memories


def saved(path: Path, make_memory: MakeMemory, n: int, *, hnsw_min: int = 0) -> list[Memory]:
    """A store of ``n`` memories whose index was built, so its sidecar is written at close."""
    with open_store(path, hnsw_min=hnsw_min) as store:
        memories = fill(store, make_memory, n, seed=1)
        store.vector_index()
    return memories


def read_from_store(path: Path) -> VectorIndex:
    """The index as a read of the store gives it (no sidecar)."""
    with open_store(path) as store:
        return store._read_vectors(store.model_identity())


def assert_same_index(got: VectorIndex, expected: VectorIndex) -> None:
    """Every scope's exact search gives the same ids and scores from both (to float error:
    a product over the matrix and one over gathered rows round differently)."""
    assert len(got) == len(expected)
    for q in unit_rows(np.random.default_rng(5), 8):
        for scope in (Scope("work"), Scope("home"), Scope("work", agent_id="a1"), Scope("none")):
            a = got.search(q, scope, 500, exact=True)
            b = expected.search(q, scope, 500, exact=True)
            assert [i for i, _ in a] == [i for i, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-6)


def no_store_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self, identity):
        raise AssertionError("the vectors were read from the store")

    monkeypatch.setattr(Indexes, "_read_vectors", refuse)


def test_saved_at_close_then_mapped_not_read(path: Path, make_memory: MakeMemory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    sidecar = vector_sidecar.sidecar_path(path)
    with open_store(path) as store:
        fill(store, make_memory, 120, seed=1)
        store.vector_index()
        assert not sidecar.exists()  # written at close
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600
    expected = read_from_store(path)
    no_store_read(monkeypatch)
    with open_store(path) as store:
        index = store.vector_index()
        assert index.saved_as == vector_sidecar.saved_stamp(sidecar)
        assert_same_index(index, expected)


def test_small_stores_get_no_file(path: Path, make_memory: MakeMemory) -> None:
    saved(path, make_memory, 30)
    assert not vector_sidecar.sidecar_path(path).exists()


def test_changes_since_the_file_are_replayed(path: Path, make_memory: MakeMemory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    memories = saved(path, make_memory, 200)
    sidecar = vector_sidecar.sidecar_path(path)
    written = sidecar.read_bytes()
    # This process: new memories and a forget, with no index built (nothing saved at
    # close: the log holds them).
    with open_store(path) as store:
        extra = fill(store, make_memory, 4, seed=2)
        store.set_deleted(memories[3].id, 1)
    # Another writer, straight into the file: a replaced vector, a moved memory, a vector gone.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "UPDATE embeddings SET vector = ? WHERE memory_id = ?",
            (unit_rows(np.random.default_rng(7), 1)[0].tobytes(), memories[5].id),
        )
        conn.execute("UPDATE memories SET realm = 'home' WHERE id = ?", (memories[6].id,))
        conn.execute("DELETE FROM embeddings WHERE memory_id = ?", (memories[8].id,))
        conn.execute("UPDATE memories SET access_count = 9 WHERE id = ?", (memories[9].id,))
    conn.close()  # fmt: skip
    assert sidecar.read_bytes() == written
    expected = read_from_store(path)
    no_store_read(monkeypatch)
    with open_store(path) as store:
        index = store.vector_index()
        assert_same_index(index, expected)
        assert index.edits == 8  # 4 new, a forget, a new vector, a move, a vector gone
        assert memories[9].id in index.get([memories[9].id])
    assert {m.id for m in extra} <= set(index.get(m.id for m in extra))


def test_a_write_never_changes_the_mapped_file(path: Path, make_memory: MakeMemory) -> None:
    memories = saved(path, make_memory, 200)
    sidecar = vector_sidecar.sidecar_path(path)
    written = sidecar.read_bytes()
    with open_store(path) as store:
        store.vector_index()
        # Replaced in place (copy-on-write) and past the spare rows: the matrix is copied.
        store.set_deleted(memories[0].id, 1)
        store.set_deleted(memories[0].id, None)
        grown = fill(store, make_memory, 1200, seed=3)
        assert sidecar.read_bytes() == written
        q = unit_rows(np.random.default_rng(4), 1)[0]
        top = store.vector_index().search(q, Scope("work"), 5, exact=True)
    expected = read_from_store(path)
    assert_same_index(Store(path).vector_index(), expected)
    assert len(expected) == 1400 and grown[0].id in expected.get([grown[0].id])
    assert top[0][0] in {m.id for m in memories + grown}


def test_saved_again_past_the_share_and_the_log_trimmed(
    path: Path, make_memory: MakeMemory
) -> None:
    sidecar = vector_sidecar.sidecar_path(path)
    saved(path, make_memory, 200)
    first = vector_sidecar.saved_stamp(sidecar)
    with open_store(path) as store:  # 5 of 200: replayed at each open, not saved
        store.vector_index()
        fill(store, make_memory, 5, seed=2)
    assert vector_sidecar.saved_stamp(sidecar) == first
    with open_store(path) as store:  # 20 more: past RESAVE_SHARE, saved at close
        store.vector_index()
        fill(store, make_memory, 20, seed=3)
    again = vector_sidecar.saved_stamp(sidecar)
    assert again is not None and again.seq > first.seq
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT min(seq), count(*) FROM change_log").fetchone() == (again.seq, 1)
    conn.close()


def test_a_small_store_keeps_one_log_row(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path) as store:
        fill(store, make_memory, 30, seed=1)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM change_log").fetchone() == (1,)
    conn.close()


def test_a_file_from_another_history_is_not_used(path: Path, make_memory: MakeMemory) -> None:
    """A backup put back by hand under the store's name, the sidecar of the later store left
    beside it: the backup's log lacks the file's row."""
    backup = path.with_name("backup.db")
    with open_store(path) as store:
        fill(store, make_memory, 100, seed=1)
        store.backup_to(backup)
        fill(store, make_memory, 100, seed=2)
        store.vector_index()
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    backup.rename(path)
    expected = read_from_store(path)
    with open_store(path) as store:
        index = store.vector_index()
        assert index.saved_as is None  # read from the store
        assert_same_index(index, expected)


def test_a_file_of_another_model_is_not_used(path: Path, make_memory: MakeMemory) -> None:
    saved(path, make_memory, 100)
    header = vector_sidecar.sidecar_path(path).read_bytes()
    patched = header.replace(MODEL.name.encode(), OTHER_MODEL.name.encode()[: len(MODEL.name)])
    assert patched != header
    vector_sidecar.sidecar_path(path).write_bytes(patched)  # header checksum now fails too
    with open_store(path) as store:
        assert store.vector_index().saved_as is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated: shorter than the header says
        lambda b: b"not a sidecar at all",
        lambda b: b[:20] + b"\xff" * 30 + b[50:],  # header garbled
        lambda b: b"",  # empty
    ],
)
def test_a_damaged_file_is_never_used(path: Path, make_memory: MakeMemory, damage) -> None:
    saved(path, make_memory, 100)
    sidecar = vector_sidecar.sidecar_path(path)
    sidecar.write_bytes(damage(sidecar.read_bytes()))
    expected = read_from_store(path)
    with open_store(path) as store:
        index = store.vector_index()
        assert index.saved_as is None
        assert_same_index(index, expected)
    assert vector_sidecar.saved_stamp(sidecar) is not None  # written whole again


def test_a_damaged_section_is_never_used(path: Path, make_memory: MakeMemory) -> None:
    memories = saved(path, make_memory, 100)
    sidecar = vector_sidecar.sidecar_path(path)
    data = bytearray(sidecar.read_bytes())
    at = data.index(memories[0].id.encode())
    data[at] ^= 1  # one bit of the ids
    sidecar.write_bytes(bytes(data))
    with open_store(path) as store:
        assert store.vector_index().saved_as is None


def test_a_purge_removes_the_file_and_its_vector(path: Path, make_memory: MakeMemory) -> None:
    memories = saved(path, make_memory, 100)
    sidecar = vector_sidecar.sidecar_path(path)
    assert memories[0].id.encode() in sidecar.read_bytes()
    with open_store(path) as store:
        store.vector_index()
        store.purge(memories[0].id)
        assert not sidecar.exists()
    # The index still in memory saved a new file at close, without the purged memory.
    assert sidecar.exists() and memories[0].id.encode() not in sidecar.read_bytes()
    with open_store(path) as store:
        assert store.vector_index().get([memories[0].id]) == {}


def test_graphs_saved_with_the_file_check_only_what_changed(
    path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = saved(path, make_memory, 300, hnsw_min=50)
    with open_store(path, hnsw_min=50) as store:  # two changes, replayed at the next open
        store.set_deleted(memories[0].id, 1)
        conn = store._conn
        with store.transaction():
            conn.execute(
                "UPDATE embeddings SET vector = ? WHERE memory_id = ?",
                (unit_rows(np.random.default_rng(8), 1)[0].tobytes(), memories[2].id),
            )
    hashed: list[int] = []
    real = ann_sidecar.row_hashes

    def counting(matrix: np.ndarray) -> np.ndarray:
        hashed.append(len(matrix))
        return real(matrix)

    monkeypatch.setattr(ann_sidecar, "row_hashes", counting)
    builds: list[int] = []
    real_build = VectorIndex.build_graph
    monkeypatch.setattr(
        VectorIndex, "build_graph", lambda self, code: builds.append(code) or real_build(self, code)
    )
    with open_store(path, hnsw_min=50) as store:
        index = store.vector_index()
        assert builds == [] and index.saved_as is not None
        assert sum(hashed) <= 2  # the replayed rows of each realm, not all 300
        q = np.asarray(index.get([memories[2].id])[memories[2].id])
        assert index.search(q, Scope("work"), 1)[0][0] == memories[2].id
        found = {i for i, _ in index.search(q, Scope("work"), 200)}
        assert memories[0].id not in found
        for scope in (Scope("work"), Scope("home")):
            for v in unit_rows(np.random.default_rng(6), 10):
                assert_same_hits(index.search(v, scope, 5), index.search(v, scope, 5, exact=True))
