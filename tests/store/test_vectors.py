"""The in-memory vector index: exact cosine search within a scope over live vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.store.records import Scope
from chitta.store.vectors import VectorIndex


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def angled(degrees: float) -> np.ndarray:
    """A unit vector in the x-y plane at ``degrees`` from the x axis (dim 3)."""
    r = math.radians(degrees)
    return unit(math.cos(r), math.sin(r), 0.0)


X = unit(1, 0, 0)
HERE = ("work", "", "")


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [mid for mid, _ in hits]


def test_search_is_best_first_cosine() -> None:
    index = VectorIndex(3)
    angles = {"a60": 60, "a10": 10, "a90": 90, "a30": 30, "a180": 180}
    index.add(list(angles), np.stack([angled(d) for d in angles.values()]), [HERE] * 5)
    hits = index.search(X, Scope("work"), 10)
    assert ids(hits) == ["a10", "a30", "a60", "a90", "a180"]
    for mid, score in hits:
        assert score == pytest.approx(math.cos(math.radians(angles[mid])), abs=1e-6)
    assert ids(index.search(X, Scope("work"), 2)) == ["a10", "a30"]
    assert index.search(X, Scope("work"), 0) == []


def test_scope_axes_none_is_unfiltered_and_values_are_exact() -> None:
    index = VectorIndex(3)
    rows = {
        "plain": ("work", "", ""),
        "ann": ("work", "ann", ""),
        "ann-slack": ("work", "ann", "slack"),
        "bob-slack": ("work", "bob", "slack"),
        "home": ("home", "ann", "slack"),
    }
    index.add(list(rows), np.stack([X] * len(rows)), list(rows.values()))

    def found(scope: Scope) -> set[str]:
        return set(ids(index.search(X, scope, 10)))

    assert found(Scope("work")) == {"plain", "ann", "ann-slack", "bob-slack"}
    assert found(Scope("work", agent_id="ann")) == {"ann", "ann-slack"}
    assert found(Scope("work", agent_id="")) == {"plain"}
    assert found(Scope("work", channel="slack")) == {"ann-slack", "bob-slack"}
    assert found(Scope("work", channel="")) == {"plain", "ann"}
    assert found(Scope("work", "ann", "slack")) == {"ann-slack"}
    assert found(Scope("home")) == {"home"}
    assert found(Scope("nowhere")) == set()
    assert found(Scope("work", agent_id="carol")) == set()
    # A value known only on another axis or realm matches nothing here.
    assert found(Scope("work", agent_id="slack")) == set()
    assert found(Scope("home", agent_id="bob")) == set()


def test_dead_rows_are_hidden_until_revived() -> None:
    index = VectorIndex(3)
    index.add(["near", "far"], np.stack([angled(5), angled(80)]), [HERE, HERE])
    index.set_alive("near", False)
    assert ids(index.search(X, Scope("work"), 5)) == ["far"]
    assert len(index) == 1
    index.set_alive("far", False)
    assert index.search(X, Scope("work"), 5) == []
    assert len(index) == 0
    index.set_alive("near", True)
    assert ids(index.search(X, Scope("work"), 5)) == ["near"]
    index.set_alive("never-added", True)  # unknown ids are ignored
    assert len(index) == 1


def test_grows_past_its_capacity() -> None:
    index = VectorIndex(3, capacity=2)
    angles = list(range(0, 90, 3))  # 30 vectors
    index.add([f"v{angles[0]}"], angled(angles[0])[None, :], [HERE])
    index.add(
        [f"v{d}" for d in angles[1:5]], np.stack([angled(d) for d in angles[1:5]]), [HERE] * 4
    )
    for d in angles[5:]:
        index.add([f"v{d}"], angled(d)[None, :], [("work", "ann", "")])
    assert len(index) == len(angles)
    hits = index.search(X, Scope("work"), 100)
    assert ids(hits) == [f"v{d}" for d in angles]
    for (_, score), d in zip(hits, angles, strict=True):
        assert score == pytest.approx(math.cos(math.radians(d)), abs=1e-6)
    assert ids(index.search(X, Scope("work", agent_id=""), 100)) == [f"v{d}" for d in angles[:5]]


def test_replacing_a_vector_keeps_one_row() -> None:
    index = VectorIndex(3)
    index.add(["m", "other"], np.stack([angled(80), angled(40)]), [HERE, HERE])
    index.set_alive("m", False)
    index.add(["m"], angled(0)[None, :], [("work", "ann", "")])
    assert len(index) == 2
    hits = index.search(X, Scope("work"), 10)
    assert ids(hits) == ["m", "other"]
    assert hits[0][1] == pytest.approx(1.0)
    assert ids(index.search(X, Scope("work", agent_id="ann"), 10)) == ["m"]
    assert ids(index.search(X, Scope("work", agent_id=""), 10)) == ["other"]


REALM = st.sampled_from(["work", "home", "lab"])
AGENT = st.sampled_from(["", "ann", "bob"])
CHANNEL = st.sampled_from(["", "slack", "cli"])
ENTRY = st.tuples(
    REALM,
    AGENT,
    CHANNEL,
    st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=4, max_size=4),
    st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(ENTRY, max_size=40),
    scope=st.builds(Scope, REALM, st.none() | AGENT, st.none() | CHANNEL),
    k=st.integers(0, 50),
    capacity=st.integers(1, 8),
)
def test_results_are_always_in_scope_live_and_best(entries, scope, k, capacity) -> None:
    index = VectorIndex(4, capacity=capacity)
    query = unit(1, 2, 3, 4)
    expected: dict[str, float] = {}
    for i, (realm, agent, channel, xs, alive) in enumerate(entries):
        v = np.array(xs, dtype=np.float32)
        index.add([f"m{i}"], v[None, :], [(realm, agent, channel)])
        index.set_alive(f"m{i}", alive)
        in_scope = (
            realm == scope.realm
            and scope.agent_id in (None, agent)
            and scope.channel in (None, channel)
        )
        if alive and in_scope:
            expected[f"m{i}"] = float(v @ query)

    hits = index.search(query, scope, k)

    assert len(hits) == min(k, len(expected))
    assert {mid for mid, _ in hits} <= expected.keys()
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    for mid, score in hits:
        assert score == pytest.approx(expected[mid], abs=1e-5)
    best = sorted(expected.values(), reverse=True)[: len(hits)]
    assert scores == pytest.approx(best, abs=1e-5)


def test_search_other_realms_skips_the_home_realm_and_keeps_the_other_axes() -> None:
    index = VectorIndex(3)
    rows = {
        "home": ("work", "ann", ""),
        "near": ("ops", "ann", ""),
        "far": ("misc", "ann", "slack"),
        "bob": ("ops", "bob", ""),
        "gone": ("ops", "ann", ""),
    }
    vectors = np.stack([X, angled(10), angled(60), angled(5), angled(1)])
    index.add(list(rows), vectors, list(rows.values()))
    index.set_alive("gone", False)
    assert ids(index.search_other_realms(X, Scope("work"), 10)) == ["bob", "near", "far"]
    assert ids(index.search_other_realms(X, Scope("work", agent_id="ann"), 10)) == ["near", "far"]
    assert ids(index.search_other_realms(X, Scope("work", channel="slack"), 10)) == ["far"]
    assert ids(index.search_other_realms(X, Scope("nowhere"), 1)) == ["home"]  # all realms
    assert index.search_other_realms(X, Scope("work", agent_id="zed"), 10) == []
