"""Both development sets as stores for the tuning aids (bench/devsets.py): real store, real
model, tiny LoCoMo-format files written by the test."""

from __future__ import annotations

from pathlib import Path

from chitta.bench.devsets import bench_embedder, loaded_sets
from chitta.bench.runner import realm_for
from chitta.bench.turn_vectors import DocumentCache


def test_each_set_is_loaded_a_realm_per_conversation_then_closed(
    tiny_locomo, embedder, tmp_path: Path
) -> None:
    tiny_locomo.write(tmp_path / "a.json", {"conv-a": ["What did {a} adopt?"]})
    tiny_locomo.write(tmp_path / "b.json", {"conv-b": ["Where does {b} work?"]})
    seen = []
    for name, data, store in loaded_sets(None, embedder.inner, folder=tmp_path,
                                         sets={"one": "a.json", "two": "b.json"}):  # fmt: skip
        conv = data.conversations[0]
        hits = store.open().recall(conv.questions[0].question, realm=realm_for(conv.sample_id),
                                   limit=3, record=False)  # fmt: skip
        assert hits.hits and all(h.memory.realm == realm_for(conv.sample_id) for h in hits.hits)
        seen.append((name, conv.sample_id, store))
    assert [(n, s) for n, s, _ in seen] == [("one", "conv-a"), ("two", "conv-b")]
    assert all(store.chitta is None for _, _, store in seen)  # each closed after its turn


def test_the_embedder_reads_a_vector_cache_when_given_one(tmp_path: Path) -> None:
    assert not isinstance(bench_embedder(), DocumentCache)
    assert isinstance(bench_embedder(tmp_path), DocumentCache)
