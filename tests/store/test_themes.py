"""Themes (seed 001's Theme System): assignment by cosine and sparsity, split, merge and
reassign kept in bounded steps, two-stage search, and the store keeping them in step."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chitta.store.base import Store
from chitta.store.records import Scope
from chitta.store.themes import IDEAL_SIZE, SPLIT_AT, ThemeIndex, sparsity

DIM = 64
SEARCH = {"themes": 5, "diversity": 0.3, "theme_weight": 1.0}


def _topics(n: int, per: int, *, noise: float = 1.0, seed: int = 0):
    """``n`` random topic directions and ``per`` noisy unit vectors around each, shuffled."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(n), per)
    x = centres[labels] + noise * rng.normal(size=(len(labels), DIM)) / math.sqrt(DIM)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    order = rng.permutation(len(labels))
    return x[order].astype(np.float32), labels[order], centres.astype(np.float32)


def _purity(index: ThemeIndex, labels: np.ndarray) -> float:
    """Share of memories whose theme's most common topic is their own."""
    by_theme: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        by_theme.setdefault(index.theme_of(f"m{i}"), []).append(int(label))
    return sum(Counter(v).most_common(1)[0][1] for v in by_theme.values()) / len(labels)


def _check_consistent(index: ThemeIndex) -> None:
    """Every live row in exactly one theme whose sum, size and centroid agree with it."""
    for realm, state in index._realms.items():
        for slot, rows in state.members.items():
            assert rows and state.sizes[slot] == len(rows)
            assert all(index._theme[r] == slot and index._scope[r][0] == realm for r in rows)
            total = index._vectors[sorted(rows)].astype(np.float64).sum(axis=0)
            assert np.allclose(state.sums[slot], total, atol=1e-3)
            assert np.linalg.norm(state.unit[slot]) == pytest.approx(1.0, abs=1e-4)
        empty = [s for s in range(len(state.sizes)) if s not in state.members]
        assert all(state.sizes[s] == 0 for s in empty) and sorted(empty) == sorted(state.free)


def test_sparsity_is_the_seed_formula() -> None:
    assert sparsity(0) == pytest.approx(1 / (1 + math.exp(-2)))  # 0.88: an empty theme
    assert sparsity(IDEAL_SIZE) == pytest.approx(0.5)
    assert sparsity(2 * IDEAL_SIZE) == pytest.approx(1 / (1 + math.exp(2)))
    sizes = np.arange(0, 40)
    assert (np.diff(sparsity(sizes)) < 0).all()  # a larger theme always attracts less
    assert sparsity(10, ideal=20) == pytest.approx(1 / (1 + math.exp(2 * (0.5 - 1))))


@pytest.mark.parametrize("how", ["add", "build"])
def test_memories_of_one_topic_share_a_theme(how: str) -> None:
    x, labels, _ = _topics(12, 8)
    index = ThemeIndex(DIM)
    ids = [f"m{i}" for i in range(len(x))]
    if how == "add":
        for i, memory_id in enumerate(ids):
            index.add([memory_id], x[i : i + 1], [("r", "", "")])
    else:
        index.build(ids, x, [("r", "", "")] * len(ids))
    assert _purity(index, labels) >= 0.95
    assert 12 <= len(index.sizes("r")) <= 16  # about one theme a topic
    _check_consistent(index)


def test_a_build_is_deterministic() -> None:
    x, _, _ = _topics(10, 10)
    ids = [f"m{i}" for i in range(len(x))]
    one, two = ThemeIndex(DIM), ThemeIndex(DIM)
    one.build(ids, x, [("r", "", "")] * len(ids))
    two.build(ids, x, [("r", "", "")] * len(ids))
    assert one.members("r") == two.members("r")


def test_a_theme_that_grows_to_twice_the_ideal_size_is_split() -> None:
    # One topic of 60 memories: never one theme of 60, every theme under the split size.
    x, _, _ = _topics(1, 60, noise=0.6)
    index = ThemeIndex(DIM)
    for i in range(len(x)):
        index.add([f"m{i}"], x[i : i + 1], [("r", "", "")])
        assert max(index.sizes("r")) < SPLIT_AT * IDEAL_SIZE
    assert sum(index.sizes("r")) == 60 and len(index.sizes("r")) >= 3
    _check_consistent(index)


def test_a_memory_moved_by_reassignment_can_split_the_theme_it_joins() -> None:
    rng = np.random.default_rng(7)
    u = rng.normal(size=DIM)
    u /= np.linalg.norm(u)
    index = ThemeIndex(DIM, ideal=4)  # split at 8
    tight = [u + 0.3 * rng.normal(size=DIM) / math.sqrt(DIM) for _ in range(8)]
    tight = [v / np.linalg.norm(v) for v in tight]
    for i, v in enumerate(tight[:7]):
        index.add([f"t{i}"], v[None, :], [("r", "", "")])
    assert index.sizes("r") == [7]
    # The eighth sits in a theme of its own with an unrelated memory (as drift can leave it).
    state = index._realms["r"]
    slot = state.open_slot()
    other = rng.normal(size=DIM)
    for name, v in (("x", tight[7]), ("y", other / np.linalg.norm(other))):
        row = index._new_row(name, ("r", "", ""))
        index._vectors[row] = v
        index._join(state, slot, row)
    for _ in range(3):  # the cursor reaches x: it moves, and the theme it joins splits
        index._reassign(state)
    assert index.theme_of("x") != slot
    assert max(index.sizes("r")) < 8 and sum(index.sizes("r")) == 9
    _check_consistent(index)


def test_a_build_splits_too_and_leaves_no_theme_at_the_split_size() -> None:
    # A dense topic beside loose ones: the build's reassignment pass moves memories into
    # the dense topic's themes, and whatever grows to the split size is split again.
    dense, _, _ = _topics(1, 200, noise=0.4, seed=5)
    loose, _, _ = _topics(20, 5, noise=1.5, seed=6)
    x = np.concatenate([dense, loose])
    index = ThemeIndex(DIM)
    index.build([f"m{i}" for i in range(len(x))], x, [("r", "", "")] * len(x))
    assert sum(index.sizes("r")) == 300
    assert max(index.sizes("r")) < SPLIT_AT * IDEAL_SIZE
    _check_consistent(index)


def test_themes_left_small_and_alike_by_forgetting_merge() -> None:
    # Two tight groups around nearby directions, each with a far-off memory that pulled its
    # centroid away at first; forgetting the far-off ones leaves two alike, small themes.
    rng = np.random.default_rng(3)
    u = rng.normal(size=DIM)
    u /= np.linalg.norm(u)
    index = ThemeIndex(DIM, ideal=12)
    near = [u + 0.25 * rng.normal(size=DIM) / math.sqrt(DIM) for _ in range(4)]
    for i, v in enumerate(near):
        index.add([f"n{i}"], (v / np.linalg.norm(v))[None, :], [("r", "", "")])
    slot = index.theme_of("n0")
    # Force a second theme of the same subject, as a reassignment or a split can leave one.
    state = index._realms["r"]
    other = state.open_slot()
    for row in (index._row["n2"], index._row["n3"]):
        index._move(state, row, other)
    assert index.theme_of("n2") != slot
    index.set_alive("n1", False)  # a write to the first theme: it is checked for a merge
    assert index.theme_of("n0") == index.theme_of("n2") == index.theme_of("n3")
    _check_consistent(index)


def test_reassignment_moves_a_member_its_theme_no_longer_fits() -> None:
    x, labels, _ = _topics(2, 6, noise=0.5)
    index = ThemeIndex(DIM)
    index.build([f"m{i}" for i in range(len(x))], x, [("r", "", "")] * len(x))
    assert _purity(index, labels) == 1.0
    # Put one memory in the wrong theme; the writes that follow re-examine every member.
    wrong = next(i for i in range(len(x)) if labels[i] == 0)
    target = index.theme_of(next(f"m{i}" for i in range(len(x)) if labels[i] == 1))
    state = index._realms["r"]
    index._move(state, index._row[f"m{wrong}"], target)
    assert index.theme_of(f"m{wrong}") == target
    for j in range(len(x)):  # writes elsewhere in the realm, each reassigning a few
        index.add([f"w{j}"], x[j : j + 1], [("r", "", "")])
    assert index.theme_of(f"m{wrong}") == index.theme_of(
        next(f"m{i}" for i in range(len(x)) if labels[i] == 0 and i != wrong)
    )
    _check_consistent(index)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "forget", "readd", "move"]), st.integers(0, 39)),
        max_size=120,
    )
)
# A memory moved out of a realm whose old row the realm's reassignment cursor still visits.
@example([("add", 1), ("move", 0), ("add", 0), ("move", 1)])
def test_any_sequence_of_writes_keeps_themes_consistent(ops) -> None:
    x, _, _ = _topics(4, 10, noise=1.2)
    index = ThemeIndex(DIM, ideal=4)
    live: set[str] = set()
    for op, i in ops:
        memory_id = f"m{i}"
        if op == "forget":
            index.set_alive(memory_id, False)
            live.discard(memory_id)
        else:
            realm = "other" if op == "move" else "r"
            index.add([memory_id], x[i : i + 1], [(realm, "", "")])
            live.add(memory_id)
        _check_consistent(index)
    assert {m for realm in ("r", "other") for t in index.members(realm) for m in t} == live
    for realm in ("r", "other"):
        assert max(index.sizes(realm), default=0) < SPLIT_AT * 4


def test_search_takes_diverse_themes_then_their_memories_in_scope() -> None:
    x, labels, centres = _topics(6, 8, noise=0.6)
    index = ThemeIndex(DIM)
    scopes = [("r", "ann" if i % 2 else "bob", "") for i in range(len(x))]
    index.build([f"m{i}" for i in range(len(x))], x, scopes)
    index.add(["far"], x[:1], [("elsewhere", "", "")])
    query = centres[0] + centres[1]
    query /= np.linalg.norm(query)
    hits = index.search(query, Scope("r"), 16, **SEARCH)
    topics = {int(labels[int(m[1:])]) for m, _ in hits}
    assert {0, 1} <= topics  # both subjects of the question, not one
    assert "far" not in dict(hits)  # another realm
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    ann = index.search(query, Scope("r", agent_id="ann"), 16, **SEARCH)
    assert ann and all(int(m[1:]) % 2 for m, _ in ann)
    assert index.search(query, Scope("nowhere"), 10, **SEARCH) == []
    assert index.search(query, Scope("r"), 0, **SEARCH) == []
    # Score: a memory's cosine plus its theme's.
    m, score = hits[0]
    row = index._row[m]
    state = index._realms["r"]
    expected = float(x[int(m[1:])] @ query) + float(state.unit[index._theme[row]] @ query)
    assert score == pytest.approx(expected, abs=2e-3)  # (vectors held as float16)


def test_store_keeps_the_themes_in_step(store: Store, open_again, embedder, make_memory) -> None:
    store.bind_model(embedder.identity())
    texts = [
        "We chose SQLite WAL over a custom log because crash recovery comes free",
        "The deploy script lives in ops/deploy.sh and needs the VPN",
        "Alice prefers tabs over spaces in Python code",
    ]
    items = [make_memory(t) for t in texts]
    vectors = embedder.embed(texts).vectors
    store.insert([(items[0], vectors[0]), (items[2], vectors[2])])
    assert store.themes().theme_of(items[1].id) is None  # built from the store
    store.insert([(items[1], vectors[1])])  # kept in step after that

    def found(s: Store = store) -> set[str]:
        return {mid for t in s.themes().members("work") for mid in t}

    assert found() == {m.id for m in items}
    store.set_deleted(items[1].id, 1)
    assert items[1].id not in found()
    store.set_deleted(items[1].id, None)
    assert items[1].id in found()
    deploy = store.themes().search(vectors[1], Scope("work"), 5, **SEARCH)
    assert deploy[0][0] == items[1].id
    store.purge(items[1].id)
    assert found() == {items[0].id, items[2].id}
    store.close()
    with open_again() as again:  # a fresh build from the store agrees
        assert found(again) == {items[0].id, items[2].id}
