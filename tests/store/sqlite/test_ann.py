"""HNSW graphs in the vector index: same answers as exact search, kept in step with writes,
realm by realm, and a sidecar that is checked, repaired or rebuilt but never trusted blindly."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store, ann_sidecar
from chitta.store.vectors import VectorIndex

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)

DIM = 16
MODEL = ModelIdentity("test-model", DIM, "a" * 64)
OTHER_MODEL = ModelIdentity("other-model", DIM, "b" * 64)
HNSW_MIN = 50


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def fill(
    store: Store, make_memory: MakeMemory, n: int, seed: int, **fields: object
) -> list[Memory]:
    rng = np.random.default_rng(seed)
    memories = [make_memory(f"memory {seed}-{i}", **fields) for i in range(n)]
    store.insert(list(zip(memories, unit_rows(rng, n), strict=True)))
    return memories


def open_store(path: Path, hnsw_min: int = HNSW_MIN) -> Store:
    store = Store(path, hnsw_min=hnsw_min)
    store.bind_model(MODEL)
    return store


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [mid for mid, _ in hits]


def assert_same_as_exact(store: Store, scope: Scope, k: int = 10, queries: int = 20) -> None:
    """The graph's top ``k`` equals exact search's for random queries (tiny realm: exact)."""
    index = store.vector_index()
    rng = np.random.default_rng(99)
    for q in unit_rows(rng, queries):
        assert_same_hits(index.search(q, scope, k), index.search(q, scope, k, exact=True))


def assert_same_hits(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    """Same ranking; two ids may swap only where their scores tie to float error (the
    graph's distance kernels and numpy round differently in the last bits)."""
    assert len(got) == len(expected)
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    for (gid, gs), (eid, _) in zip(got, expected, strict=True):
        if gid != eid:
            assert any(abs(gs - s) <= 1e-5 for m, s in expected if m == gid)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def test_graph_only_above_the_threshold_and_per_realm(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path) as store:
        fill(store, make_memory, 200, seed=1)
        fill(store, make_memory, 20, seed=2, realm="home")
        index = store.vector_index()
        assert index.has_graph("work")
        assert not index.has_graph("home")
        assert_same_as_exact(store, Scope("work"))
        # Realm isolation: the graph of 'work' never answers for 'home', nor the reverse.
        home = {m for m, _ in index.search(unit_rows(np.random.default_rng(3), 1)[0],
                                           Scope("home"), 50)}  # fmt: skip
        assert len(home) == 20
        work_ids = set(index.graphs()["work"].keyed_rows()[i][1] for i in range(3))
        assert all(index.id_of(r) not in home for r in work_ids)
        fill(store, make_memory, 40, seed=4, realm="home")  # crosses the threshold: built now
        assert index.has_graph("home")
        assert_same_as_exact(store, Scope("home"))
        got = ids(index.search(unit_rows(np.random.default_rng(5), 1)[0], Scope("home"), 100))
        assert len(got) == 60
    assert stat.S_IMODE(os.stat(ann_sidecar.sidecar_path(path)).st_mode) == 0o600


def test_the_sidecar_is_owner_only_whatever_was_there(
    path: Path, make_memory: MakeMemory, umask0
) -> None:
    sidecar = ann_sidecar.sidecar_path(path)
    leftover = sidecar.with_name(f"{sidecar.name}.tmp-{os.getpid()}")  # a killed save's
    leftover.write_bytes(b"half of an older save")
    leftover.chmod(0o666)
    with open_store(path) as store:
        fill(store, make_memory, 200, seed=1)
        assert store.vector_index().has_graph("work")
    assert stat.S_IMODE(os.stat(sidecar).st_mode) == 0o600
    assert not leftover.exists()


def test_zero_threshold_never_builds(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path, hnsw_min=0) as store:
        fill(store, make_memory, 200, seed=1)
        assert not store.vector_index().graphs()
    assert not ann_sidecar.sidecar_path(path).exists()


def test_writes_and_deletes_stay_in_step(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path) as store:
        memories = fill(store, make_memory, 300, seed=1)
        index = store.vector_index()
        ann = index.graphs()["work"]
        target = store.vectors_for([memories[0].id])[memories[0].id]
        assert ids(index.search(target, Scope("work"), 1)) == [memories[0].id]

        store.set_deleted(memories[0].id, 1)  # forget
        assert memories[0].id not in ids(index.search(target, Scope("work"), 10))
        assert len(ann) == 299
        store.set_deleted(memories[0].id, None)  # restore
        assert ids(index.search(target, Scope("work"), 1)) == [memories[0].id]
        store.purge(memories[0].id)
        # usearch keeps a removed vector's bytes in what it saves: a purge rebuilds instead.
        assert not ann_sidecar.sidecar_path(path).exists()
        index = store.vector_index()
        ann = index.graphs()["work"]
        assert memories[0].id not in ids(index.search(target, Scope("work"), 10))
        assert len(ann) == 299

        new = fill(store, make_memory, 30, seed=7)  # inserts
        v = store.vectors_for([new[5].id])[new[5].id]
        assert ids(index.search(v, Scope("work"), 1)) == [new[5].id]
        assert len(ann) == 329
        assert_same_as_exact(store, Scope("work"))
    saved = ann_sidecar.sidecar_path(path).read_bytes()
    # The graph keeps its vectors as float16 (store/ann.py, DTYPE).
    assert target.astype(np.float16).tobytes() not in saved  # the purged vector is gone
    assert v.astype(np.float16).tobytes() in saved  # as a live one is there


def test_model_replacement_and_reembed_rebuild_the_graph(
    path: Path, make_memory: MakeMemory
) -> None:
    with open_store(path) as store:
        memories = fill(store, make_memory, 200, seed=1)
        before = store.vector_index()
        assert before.has_graph("work")
        fresh = dict(zip([m.id for m in memories], unit_rows(np.random.default_rng(8), 200),
                         strict=True))  # fmt: skip
        store.replace_model(OTHER_MODEL, fresh)
        after = store.vector_index()
        assert after is not before and after.has_graph("work")
        for mid in [memories[0].id, memories[77].id]:
            assert ids(after.search(fresh[mid], Scope("work"), 1)) == [mid]
        assert_same_as_exact(store, Scope("work"))
    # The sidecar now holds the new model's graph; reopening under it uses the new vectors.
    with Store(path, hnsw_min=HNSW_MIN) as store:
        store.bind_model(OTHER_MODEL)
        mid = memories[3].id
        assert ids(store.vector_index().search(fresh[mid], Scope("work"), 1)) == [mid]


def test_filtered_scopes_get_depth_results(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path) as store:
        fill(store, make_memory, 400, seed=1, agent_id="ann")
        fill(store, make_memory, 100, seed=2, agent_id="bob")
        fill(store, make_memory, 3, seed=3, agent_id="cy", channel="cli")
        index = store.vector_index()
        assert index.has_graph("work")
        q = unit_rows(np.random.default_rng(4), 1)[0]
        for scope, size in [
            (Scope("work", agent_id="ann"), 400),
            (Scope("work", agent_id="bob"), 100),  # oversampled through the graph
            (Scope("work", agent_id="cy"), 3),  # too selective: exact
            (Scope("work", channel="cli"), 3),
            (Scope("work", agent_id="nobody"), 0),
        ]:
            hits = index.search(q, scope, 40)
            assert len(hits) == min(40, size)
            assert_same_hits(hits, index.search(q, scope, 40, exact=True))


def test_sidecar_is_reused_repaired_and_rebuilt(
    path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sidecar = ann_sidecar.sidecar_path(path)
    with open_store(path) as store:
        memories = fill(store, make_memory, 200, seed=1)
        store.vector_index()
    assert sidecar.exists()
    written = sidecar.stat().st_mtime_ns

    builds: list[int] = []
    real_build = VectorIndex.build_graph

    def counting_build(self: VectorIndex, code: int):
        builds.append(code)
        return real_build(self, code)

    monkeypatch.setattr(VectorIndex, "build_graph", counting_build)
    with open_store(path) as store:  # unchanged: reused as it is, not rewritten
        store.vector_index()
        assert builds == []
        assert_same_as_exact(store, Scope("work"))
    assert sidecar.stat().st_mtime_ns == written

    # Changes made while the sidecar was not looking (another process, a crash before close).
    with open_store(path, hnsw_min=0) as store:
        store.set_deleted(memories[1].id, 1)
        store.set_deleted(memories[2].id, 1)
        extra = fill(store, make_memory, 5, seed=9)
    with open_store(path) as store:  # stale: repaired in place, no rebuild
        index = store.vector_index()
        assert builds == []
        assert len(index.graphs()["work"]) == 203
        found = set(ids(index.search(np.ones(DIM, np.float32), Scope("work"), 300)))
        assert memories[1].id not in found and memories[2].id not in found
        assert {m.id for m in extra} <= found
        assert_same_as_exact(store, Scope("work"))
    # 7 of 203 rows changed: cheaper to repair at each open than to rewrite the file.
    assert sidecar.stat().st_mtime_ns == written

    with open_store(path) as store:  # past RESAVE_SHARE of the rows: saved again at close
        store.vector_index()
        fill(store, make_memory, 20, seed=11)
        assert store.vector_index().needs_save()
    assert sidecar.stat().st_mtime_ns != written
    with open_store(path) as store:
        store.vector_index()
        assert not store.vector_index().needs_save()
        assert builds == []


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b[:-100] + bytes(100),  # blob bytes changed
        lambda b: b"not a sidecar at all",
        lambda b: b[:20] + b"\xff" * 30 + b[50:],  # header garbled
        lambda b: b[:300] + bytes([b[300] ^ 1]) + b[301:],  # one bit of the ids and keys
        lambda b: b"",  # empty (the file cannot be memory-mapped)
    ],
)
def test_corrupt_sidecar_never_changes_results(path: Path, make_memory: MakeMemory, damage) -> None:
    with open_store(path) as store:
        fill(store, make_memory, 200, seed=1)
        q = unit_rows(np.random.default_rng(2), 1)[0]
        expected = ids(store.vector_index().search(q, Scope("work"), 10, exact=True))
    sidecar = ann_sidecar.sidecar_path(path)
    sidecar.write_bytes(damage(sidecar.read_bytes()))
    with open_store(path) as store:
        index = store.vector_index()
        assert index.has_graph("work")
        assert ids(index.search(q, Scope("work"), 10)) == expected
        assert_same_as_exact(store, Scope("work"))
    # Rebuilt and rewritten whole.
    with open_store(path) as store:
        assert ids(store.vector_index().search(q, Scope("work"), 10)) == expected


def test_sidecar_of_another_model_is_ignored(path: Path, make_memory: MakeMemory) -> None:
    with open_store(path) as store:
        memories = fill(store, make_memory, 200, seed=1)
        vectors = store.vectors_for([m.id for m in memories])
        store.vector_index()
    sidecar = ann_sidecar.sidecar_path(path)
    stale = sidecar.read_bytes()
    with open_store(path) as store:
        fresh = {mid: -v for mid, v in vectors.items()}
        store.replace_model(OTHER_MODEL, fresh)
    sidecar.write_bytes(stale)  # the old model's graph put back
    with Store(path, hnsw_min=HNSW_MIN) as store:
        store.bind_model(OTHER_MODEL)
        mid = memories[0].id
        assert ids(store.vector_index().search(fresh[mid], Scope("work"), 1)) == [mid]
        assert_same_as_exact(store, Scope("work"))


def test_usearch_then_onnxruntime_imports_cleanly() -> None:
    """Some usearch releases crash the interpreter when onnxruntime loads after them
    (pyproject.toml pins around them); a store opens its graphs before any model loads."""
    import subprocess
    import sys

    code = "import chitta.store.sqlite, usearch.index, onnxruntime; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "ok"


def test_the_index_read_in_chunks_is_the_index_read_whole(
    path: Path, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chitta.store.sqlite import indexes

    with open_store(path) as store:
        work = fill(store, make_memory, 70, seed=11)  # a graph (HNSW_MIN 50)
        fill(store, make_memory, 23, seed=12, realm="home")
        for m in work[::9]:
            store.set_deleted(m.id, 1)
    queries = unit_rows(np.random.default_rng(5), 5)
    answers = []
    for chunk in (10_000, 7):  # all at once, then in chunks of 7 (realms spanning them)
        monkeypatch.setattr(indexes, "LOAD_CHUNK", chunk)
        with open_store(path) as store:
            index = store.vector_index()
            assert len(index) == 70 - len(work[::9]) + 23 and index.has_graph("work")
            answers.append([index.search(q, Scope(r), 10, exact=True) for q in queries
                            for r in ("work", "home")])  # fmt: skip
    assert answers[0] == answers[1]


def test_the_sidecar_is_mapped_copy_on_write(tmp_path: Path) -> None:
    """A missing or empty file maps to None; an error inside the block comes out as itself,
    even while a slice of the mapping is still held; a write to the mapping (a viewed graph
    is never written, but if it were) never reaches the file."""
    with ann_sidecar._mapped(tmp_path / "missing") as mapped:
        assert mapped is None
    (tmp_path / "empty").write_bytes(b"")
    with ann_sidecar._mapped(tmp_path / "empty") as mapped:
        assert mapped is None
    (tmp_path / "some").write_bytes(b"chitta" * 10)
    with ann_sidecar._mapped(tmp_path / "some") as mapped:
        assert mapped is not None
        _, data = mapped
        assert bytes(data[:6]) == b"chitta"
        data[0] = ord("C")
        kept = data[:6]
    assert bytes(kept) == b"Chitta"  # a slice outlives the block, the mapping with it
    assert (tmp_path / "some").read_bytes()[:6] == b"chitta"
    some = tmp_path / "some"
    with pytest.raises(ValueError, match="inside"), ann_sidecar._mapped(some) as mapped:
        held = mapped[1][6:12]  # noqa: F841 - a view into the mapping, alive when the error leaves
        raise ValueError("inside")  # what a failed mapping raises, too
