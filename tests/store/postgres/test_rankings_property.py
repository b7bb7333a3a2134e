"""Property: for any store content, SQLite and PostgreSQL rank alike — keyword search and
exact vector search give the same memories in the same order with the same scores, and
with their approximate indexes (SQLite's usearch graphs, pgvector's HNSW) both find nearly
what exact search finds."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.embed.base import ModelIdentity
from chitta.store.postgres import PostgresStore
from chitta.store.records import Scope
from chitta.store.sqlite import SQLiteStore

WORDS = ("deploy", "deploying", "parser", "Alice", "café", "naïve", "index", "the", "of",
         "release", "v2", "user_id", "getUser", "WAL", "Paris", "bug", "fix")  # fmt: skip
DIM = 16
MODEL = ModelIdentity("property-model", DIM, "1" * 64)
_realms = itertools.count()

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
memories = st.lists(
    st.tuples(texts, st.sampled_from(("", "ann", "bob")), st.integers(0, 2**32 - 1)),
    min_size=1,
    max_size=40,
)
queries = st.lists(st.sampled_from([w.lower() for w in WORDS] + ["cafe", "nothing"]),
                   min_size=1, max_size=3)  # fmt: skip


@pytest.fixture(scope="module")
def pair(pg_server, tmp_path_factory) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    """One SQLite store and one PostgreSQL store, each example in a realm of its own (a
    realm's statistics are its own, so examples cannot see each other)."""
    import psycopg

    name = "chitta_property"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE chitta_template")
    folder = tmp_path_factory.mktemp("property")
    lite = SQLiteStore(folder / "store.db", hnsw_min=0)
    pg = PostgresStore(pg_server.get_uri(name), home=folder, hnsw_min=0)
    for store in (lite, pg):
        store.bind_model(MODEL)
    yield lite, pg
    lite.close()
    pg.close()


def _vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=memories, asked=st.lists(queries, min_size=1, max_size=4))
def test_the_same_content_ranks_the_same(pair, make_memory, content, asked) -> None:
    lite, pg = pair
    realm = f"p{next(_realms)}"
    items = [(make_memory(text, realm=realm, agent_id=agent), _vector(seed))
             for text, agent, seed in content]  # fmt: skip
    for store in (lite, pg):
        store.insert(items)
    for scope in (Scope(realm), Scope(realm, agent_id="ann")):
        for terms in asked:
            a, b = lite.keyword_search(terms, scope, 10), pg.keyword_search(terms, scope, 10)
            assert [i for i, _ in a] == [i for i, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-9, abs=1e-12)
        for _, v in items[:5]:
            a = lite.vector_search(v, scope, 10, exact=True)
            b = pg.vector_search(v, scope, 10, exact=True)
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
            # Equal scores may come in either order, and where a tie straddles the cut at 10
            # either side may keep any of it: the ids of every score above the lowest agree.
            assert _by_score(a)[:-1] == _by_score(b)[:-1]


def _by_score(hits: list[tuple[str, float]]) -> list[frozenset[str]]:
    """The ids of ``hits`` grouped by score (to 4 places), best score first."""
    groups: dict[float, set[str]] = {}
    for i, s in hits:
        groups.setdefault(round(s, 4), set()).add(i)
    return [frozenset(groups[s]) for s in sorted(groups, reverse=True)]


def test_the_approximate_indexes_agree_with_exact_search(tmp_path: Path, pg_url, make_memory):
    """Both backends' approximate searches find, on average, at least 90% of exact search's
    top 10 over a realm of clustered vectors (HNSW's tolerance), and each other's."""
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(20, DIM))
    vectors = centres[rng.integers(0, 20, 1500)] + 0.35 * rng.normal(size=(1500, DIM))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    items = [(make_memory(f"memory {i}", realm="big"), v) for i, v in enumerate(vectors)]
    lite = SQLiteStore(tmp_path / "store.db", hnsw_min=500)
    pg = PostgresStore(pg_url, home=tmp_path, hnsw_min=500)
    try:
        for store in (lite, pg):
            store.bind_model(MODEL)
            store.insert(items)
        scope = Scope("big")
        lite.vector_search(vectors[0], scope, 10)  # builds SQLite's graph
        assert lite.vector_search_is_approximate("big") and pg.vector_search_is_approximate("big")
        overlap = {"sqlite": [], "postgresql": [], "between": []}
        for q in rng.normal(size=(40, DIM)).astype(np.float32):
            q /= np.linalg.norm(q)
            exact = {i for i, _ in lite.vector_search(q, scope, 10, exact=True)}
            a = {i for i, _ in lite.vector_search(q, scope, 10)}
            b = {i for i, _ in pg.vector_search(q, scope, 10)}
            overlap["sqlite"].append(len(a & exact) / 10)
            overlap["postgresql"].append(len(b & exact) / 10)
            overlap["between"].append(len(a & b) / 10)
        means = {k: float(np.mean(v)) for k, v in overlap.items()}
        assert means["sqlite"] >= 0.9 and means["postgresql"] >= 0.9, means
        assert means["between"] >= 0.85, means
    finally:
        lite.close()
        pg.close()
