"""A realm's HNSW graph viewed from a file's bytes (store/ann.py): it is never written, a
vector removed from it is skipped, vectors added go into a graph of their own searched
beside it, and the merged graph holds exactly the live vectors."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest
from usearch.index import Index

from chitta.store import ann
from chitta.store.ann import RealmAnn

DIM = 16


def unit_rows(seed: int, n: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def viewed(tmp_path: Path, matrix: np.ndarray) -> tuple[RealmAnn, bytes]:
    """A graph over every row of ``matrix`` (row i, key i), saved, then viewed from the file
    as the sidecar views it; and the file's bytes."""
    ann = RealmAnn(DIM)
    ann.add(np.arange(len(matrix)), matrix)
    path = tmp_path / "graph"
    path.write_bytes(bytes(ann.merged(lambda rows: matrix[rows]).save()))
    with open(path, "rb") as fh:
        mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    buffer = memoryview(mapping)
    base = Index.restore(buffer, view=True)
    restored = RealmAnn(DIM, base=base, buffer=buffer)
    keys = np.arange(len(matrix))
    restored.adopt(keys, keys, len(matrix))
    return restored, path.read_bytes()


def exact(matrix: np.ndarray, live: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    rows = np.flatnonzero(live)
    sims = matrix[rows] @ query
    return rows[np.argsort(-sims, kind="stable")[:k]].tolist()


def test_removed_skipped_added_found_file_untouched(tmp_path: Path) -> None:
    matrix = unit_rows(1, 600)
    ann, before = viewed(tmp_path, matrix)
    assert ann.viewed and len(ann) == 600
    live = np.ones(700, dtype=bool)
    # Remove the 30 nearest of a query from the viewed graph: the search must reach past them.
    query = unit_rows(2, 1)[0]
    nearest = exact(matrix, live[:600], query, 30)
    ann.remove(np.array(nearest))
    live[nearest] = False
    matrix = np.vstack([matrix, unit_rows(3, 100)])
    ann.add(np.arange(600, 700), matrix[600:])
    assert len(ann) == 670
    found = ann.search(query, 10).tolist()
    assert not set(found) & set(nearest)
    assert found == exact(matrix, live, query, 10)
    for q in unit_rows(4, 20):
        assert set(ann.search(q, 10).tolist()) == set(exact(matrix, live, q, 10))
    added = ann.search(matrix[650], 1).tolist()
    assert added == [650]
    assert (tmp_path / "graph").read_bytes() == before


def test_a_row_replaced_is_found_by_its_new_vector(tmp_path: Path) -> None:
    matrix = unit_rows(1, 300)
    ann, _ = viewed(tmp_path, matrix)
    matrix[5] = unit_rows(9, 1)[0]
    ann.add(np.array([5]), matrix[5:6])
    assert len(ann) == 300
    assert ann.search(matrix[5], 1).tolist() == [5]
    assert 5 in ann


def test_merged_holds_exactly_the_live_vectors(tmp_path: Path) -> None:
    matrix = unit_rows(1, 400)
    ann, _ = viewed(tmp_path, matrix)
    ann.remove(np.arange(0, 40))
    matrix = np.vstack([matrix, unit_rows(3, 20)])
    ann.add(np.arange(400, 420), matrix[400:])
    ann.remove(np.array([410]))  # added, then removed again: from the delta itself
    merged = ann.merged(lambda rows: matrix[rows])
    keys = {r: k for k, r in ann.keyed_rows()}
    assert len(merged) == len(ann) == 379
    assert bool(np.all(merged.contains(np.array(list(keys.values()), dtype=np.uint64))))
    assert not bool(np.any(merged.contains(np.arange(0, 40, dtype=np.uint64))))
    hit = merged.search(matrix[415], 1).keys[0]
    assert int(hit) == keys[415]


def test_a_graph_in_memory_is_its_own_merge() -> None:
    ann = RealmAnn(DIM)
    matrix = unit_rows(1, 50)
    ann.add(np.arange(50), matrix)
    assert not ann.viewed
    assert ann.merged(lambda rows: matrix[rows]) is ann.merged(lambda rows: matrix[rows])
    assert ann.search(matrix[7], 1).tolist() == [7]


def test_the_beam_widens_with_the_graph() -> None:
    """ef 128 up to 100,000 vectors, then with the square root of the size, at most 512."""
    assert ann.expansion_for(0) == ann.expansion_for(100_000) == 128
    assert ann.expansion_for(400_000) == 256
    assert 128 < ann.expansion_for(1_000_000) < 512 == ann.expansion_for(10_000_000)
    sizes = [10**5, 2 * 10**5, 5 * 10**5, 10**6, 2 * 10**6]
    assert [ann.expansion_for(n) for n in sizes] == sorted(ann.expansion_for(n) for n in sizes)


def test_a_search_uses_the_beam_of_the_graph_s_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = unit_rows(1, 300)
    graph, _ = viewed(tmp_path, matrix)
    graph.add(np.array([300]), unit_rows(2, 1))
    monkeypatch.setattr(ann, "expansion_for", lambda size: size // 3)
    graph.search(matrix[0], 5)
    assert graph._base.expansion_search == graph._index.expansion_search == 301 // 3
