"""Sparse codes (64 of 16,384 features) and their posting index, kept in step with the store."""

from __future__ import annotations

import numpy as np
import pytest

from chitta.store.base import Store
from chitta.store.records import Scope
from chitta.store.sparse import ACTIVE, FEATURES, SparseCoder, SparseIndex, coder_for

TEXTS = {
    "wal": "We chose SQLite WAL over a custom log because crash recovery comes free",
    "deploy": "The deploy script lives in ops/deploy.sh and needs the VPN",
    "tabs": "Alice prefers tabs over spaces in Python code",
    "report": "The quarterly report is due on the first Monday of March",
}


def test_a_code_is_64_of_16384_features_with_unit_activations(embedder) -> None:
    vectors = embedder.embed(list(TEXTS.values())).vectors
    feats, acts = coder_for(384).encode(vectors)
    assert feats.shape == acts.shape == (len(TEXTS), ACTIVE) and ACTIVE == 64
    for f, a in zip(feats, acts, strict=True):
        assert len(set(f.tolist())) == 64 and list(f) == sorted(f)
        assert f.min() >= 0 and f.max() < FEATURES == 16_384
        assert (a >= 0).all() and np.linalg.norm(a) == pytest.approx(1.0, abs=1e-5)
    again, _ = SparseCoder(384).encode(vectors)  # a fresh coder: the same codes
    assert (again == feats).all()


def test_similar_texts_share_more_features_than_unrelated_ones(embedder) -> None:
    a, b, c = embedder.embed([
        "We chose SQLite WAL because crash recovery comes free",
        "SQLite's write-ahead log gives us crash recovery for free",
        "Alice prefers tabs over spaces in Python code",
    ]).vectors  # fmt: skip
    feats, _ = coder_for(384).encode(np.stack([a, b, c]))
    shared = lambda i, j: len(set(feats[i].tolist()) & set(feats[j].tolist()))  # noqa: E731
    assert shared(0, 1) > shared(0, 2) and shared(0, 1) > shared(1, 2)


def test_search_scores_by_shared_activations_within_the_scope(embedder) -> None:
    index = SparseIndex(coder_for(384))
    vectors = embedder.embed(list(TEXTS.values())).vectors
    scopes = [("work", "", ""), ("work", "ann", ""), ("work", "bob", "slack"), ("home", "", "")]
    index.add(list(TEXTS), vectors, scopes)
    query = embedder.embed(["where is the deploy script?"]).vectors[0]
    hits = index.search(query, Scope("work"), 10)
    assert hits[0][0] == "deploy" and "report" not in dict(hits)  # report lives in "home"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    feats, acts = index.code("deploy")
    qf, qa = index.coder.encode(query[None, :])
    expected = sum(
        qa[0][i] * acts[list(feats).index(f)] for i, f in enumerate(qf[0]) if f in set(feats)
    )
    assert dict(hits)["deploy"] == pytest.approx(float(expected), rel=1e-5)
    assert "deploy" not in dict(index.search(query, Scope("work", agent_id="bob"), 10))
    tabs = vectors[2]  # a memory's own vector finds it; only it is in channel slack
    assert set(dict(index.search(tabs, Scope("work", channel="slack"), 10))) == {"tabs"}
    assert (
        index.search(query, Scope("nowhere"), 10) == []
        and index.search(query, Scope("work"), 0) == []
    )
    feature = int(feats[0])
    assert "deploy" in index.postings("work", feature)
    assert "deploy" not in index.postings("home", feature)


def test_store_keeps_the_index_in_step(store: Store, open_again, embedder, make_memory) -> None:
    store.bind_model(embedder.identity())
    items = {key: make_memory(text) for key, text in TEXTS.items()}
    vectors = dict(zip(items, embedder.embed(list(TEXTS.values())).vectors, strict=True))
    store.insert([(items["wal"], vectors["wal"]), (items["tabs"], vectors["tabs"])])
    query = embedder.embed(["where is the deploy script?"]).vectors[0]
    deploy = items["deploy"].id

    def found(s: Store = store, q: np.ndarray = query) -> set[str]:
        return {mid for mid, _ in s.sparse_search(q, Scope("work"), 10)}

    assert deploy not in found()  # built from the store
    store.insert([(items["deploy"], vectors["deploy"])])  # kept in step after that
    assert deploy in found()
    store.set_deleted(deploy, 1)
    assert deploy not in found()
    store.set_deleted(deploy, None)
    assert deploy in found()
    store.purge(deploy)
    assert deploy not in found() and items["wal"].id in found(q=vectors["wal"])
    store.close()
    with open_again() as again:  # a fresh index from the store agrees
        assert deploy not in found(again)
        assert items["tabs"].id in found(again, vectors["tabs"])


def test_a_memory_forgotten_before_the_index_is_built_comes_back(
    store: Store, embedder, make_memory
) -> None:
    store.bind_model(embedder.identity())
    m = make_memory(TEXTS["deploy"])
    vector = embedder.embed([m.content]).vectors[0]
    store.insert([(m, vector)])
    store.set_deleted(m.id, 1)
    assert m.id not in dict(store.sparse_search(vector, Scope("work"), 10))
    store.set_deleted(m.id, None)
    assert m.id in dict(store.sparse_search(vector, Scope("work"), 10))
