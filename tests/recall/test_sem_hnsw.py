"""Recall through the `sem` lane's HNSW graph equals recall by exact search, on real text."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from chitta.embed.cache import CachedEmbedder
from chitta.recall.config import preset
from chitta.recall.pipeline import recall
from chitta.store.base import Store
from chitta.store.records import Scope

TOPICS = ["garden", "tax return", "marathon", "guitar lessons", "kitchen leak", "python bug",
          "flight to Lisbon", "birthday cake", "dentist", "book club", "new puppy",
          "salary"]  # fmt: skip
FEELINGS = ["worried about", "excited about", "finished", "postponed", "asked Sam about",
            "spent the evening on", "paid for", "forgot", "planned",
            "talked to mum about"]  # fmt: skip
QUERIES = ["when is the dentist appointment?", "how is the marathon training going?",
           "what happened with the leak in the kitchen?", "who helped with the puppy?",
           "did the tax return get filed?", "what about the trip to Portugal?"]  # fmt: skip


def texts() -> list[str]:
    return [f"On day {d} I {f} the {t}." for d in range(1, 4) for f in FEELINGS for t in TOPICS]


@contextmanager
def build(fresh_stores, embedder: CachedEmbedder, hnsw_min: int, memory) -> Iterator[Store]:
    with fresh_stores(hnsw_min=hnsw_min) as store:
        store.bind_model(embedder.identity())
        items = texts()
        vectors = embedder.embed(items).vectors
        store.insert([(memory(t), v) for t, v in zip(items, vectors, strict=True)])
        yield store


@pytest.mark.parametrize("strategy", ["semantic", "hybrid"])
def test_graph_and_exact_recall_agree(fresh_stores, embedder: CachedEmbedder, strategy,
                                      make_memory) -> None:  # fmt: skip
    with (
        build(fresh_stores, embedder, 100, make_memory) as graph,
        build(fresh_stores, embedder, 0, make_memory) as exact,
    ):
        assert graph.vector_search_is_approximate("work")
        assert not exact.vector_search_is_approximate("work")
        config = preset(strategy)
        for q in QUERIES:
            a = recall(graph, embedder, q, Scope("work"), limit=10, config=config)
            b = recall(exact, embedder, q, Scope("work"), limit=10, config=config)
            assert [h.memory.content for h in a.hits] == [h.memory.content for h in b.hits]
            assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits])


def test_sem_lane_keeps_up_with_forget_and_purge(
    fresh_stores, embedder: CachedEmbedder, make_memory
) -> None:
    with build(fresh_stores, embedder, 100, make_memory) as store:
        config = preset("semantic")
        top = recall(store, embedder, QUERIES[0], Scope("work"), limit=5, config=config).hits[0]
        store.set_deleted(top.memory.id, 1)
        after = recall(store, embedder, QUERIES[0], Scope("work"), limit=5, config=config)
        assert top.memory.id not in [h.memory.id for h in after.hits]
        store.set_deleted(top.memory.id, None)
        again = recall(store, embedder, QUERIES[0], Scope("work"), limit=5, config=config)
        assert again.hits[0].memory.id == top.memory.id
        store.purge(top.memory.id)
        gone = recall(store, embedder, QUERIES[0], Scope("work"), limit=5, config=config)
        assert top.memory.id not in [h.memory.id for h in gone.hits]
        assert store.vector_count() == len(texts()) - 1
        assert store.vector_search_is_approximate("work")
        assert np.isfinite([h.score for h in gone.hits]).all()
