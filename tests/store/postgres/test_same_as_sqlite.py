"""The same content gives the same rankings on SQLite and PostgreSQL: keyword search (BM25
with each realm's statistics, score for score) and exact vector search."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.store.postgres import PostgresStore
from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store as SQLiteStore

_TEXT = """deploy deploying deployed parser parsing parse_tags staging production Alice Bob café
    naïve résumé database index vector the a of to meeting Friday Paris bug fix release v2
    user_id getUser WAL"""
WORDS = _TEXT.split()
REALMS = ("work", "home", "club")
MODEL = ModelIdentity("test-model", 8, "0" * 64)


def corpus(make_memory, seed: int) -> list[tuple[Memory, np.ndarray]]:
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).normal(size=(240, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    items = []
    for i, v in enumerate(vectors):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14)))
        m = make_memory(text, realm=rng.choice(REALMS), agent_id=rng.choice(("", "ann", "bob")),
                        tags=tuple(rng.sample(WORDS, rng.randint(0, 2))),
                        event_time=1_000 * i)  # fmt: skip
        if rng.random() < 0.1:
            m = replace(m, deleted_at=5)
        items.append((m, v))
    return items


@pytest.fixture
def both(pg_url: str, tmp_path: Path, make_memory):
    lite = SQLiteStore(tmp_path / "store.db")
    pg = PostgresStore(pg_url, home=tmp_path)
    items = corpus(make_memory, 18)
    for store in (lite, pg):
        store.bind_model(MODEL)
        store.insert(items[:120])
        store.insert(items[120:])
        store.set_deleted(items[3][0].id, 9)  # a forget and an edit after the fact
        store.update(replace(items[4][0], content="Alice fixes the parser bug on Friday"))
        store.purge(items[5][0].id)
    yield lite, pg, items
    lite.close()
    pg.close()


QUERIES = [
    ["deploying"],
    ["parser", "bug"],
    ["parse_tags"],
    ["cafe"],
    ["alice", "paris", "the"],
    ["getuser"],
    ["user_id", "wal"],
    ["v2", "release", "fix"],
    ["nothing"],
    ["_"],
]
SCOPES = [Scope(r, agent_id=a) for r in REALMS for a in (None, "ann")]


def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-12, abs=1e-15)


def test_keyword_rankings_agree(both) -> None:
    lite, pg, _ = both
    for terms in QUERIES:
        for scope in SCOPES:
            same(lite.keyword_search(terms, scope, 20), pg.keyword_search(terms, scope, 20))
            same(lite.keyword_search(terms, scope, 5, column="tags"),
                 pg.keyword_search(terms, scope, 5, column="tags"))  # fmt: skip
            same(lite.keyword_search_elsewhere(terms, scope, 20),
                 pg.keyword_search_elsewhere(terms, scope, 20))  # fmt: skip
            same(lite.period_keyword_search(terms, scope, 50_000, 150_000, 20,
                                            include_superseded=False),
                 pg.period_keyword_search(terms, scope, 50_000, 150_000, 20,
                                          include_superseded=False))  # fmt: skip
        assert lite.keyword_frequencies(terms, "work") == pg.keyword_frequencies(terms, "work")


def test_term_matches_and_counts_agree(both) -> None:
    lite, pg, items = both
    ids = [m.id for m, _ in items[:60]]
    for terms in QUERIES:
        assert lite.term_matches(terms, ids) == pg.term_matches(terms, ids)
    assert lite.counts() == pg.counts()
    for realm in REALMS:
        for word in ("alice", "the", "parse_tags", "café"):
            assert lite.term_stats().df(realm, word) == pg.term_stats().df(realm, word)


def test_exact_vector_rankings_agree(both) -> None:
    lite, pg, items = both
    for m, v in items[:20]:
        for scope in SCOPES:
            a = lite.vector_search(v, scope, 10, exact=True)
            b = pg.vector_search(v, scope, 10, exact=True)
            assert [i for i, _ in a] == [i for i, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
        ids = [x.id for x, _ in items[::3]]
        assert [i for i, _ in lite.vector_search_among(v, ids, 5)] == [
            i for i, _ in pg.vector_search_among(v, ids, 5)
        ]
        assert [i for i, _ in lite.vector_search_elsewhere(v, Scope(m.realm), 5)] == [
            i for i, _ in pg.vector_search_elsewhere(v, Scope(m.realm), 5)
        ]
        a = lite.sparse_search(v, Scope(m.realm), 5)
        b = pg.sparse_search(v, Scope(m.realm), 5)
        assert [i for i, _ in a] == [i for i, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b])
