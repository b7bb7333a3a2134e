"""Diversity sampling (the quality gate's third rule): which memories a burst folds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chitta.diversity import BURST_COSINE, BURST_WINDOW_MS, adds_nothing, burst_of
from chitta.store.kinds import Kind
from chitta.store.records import Source

BASE = "The integration tests need the PostgreSQL server running on port 5432"


@pytest.mark.parametrize(
    ("new", "repeat"),
    [
        ("The integration tests need a PostgreSQL server running on port 5432", True),
        ("Integration tests require the PostgreSQL server to be running on port 5432", True),
        ("The integration tests need the PostgreSQL server running on port 5433", False),
        ("The integration tests need the PostgreSQL server running, and Redis too", False),
        ("The integration tests need the PostgreSQL server running on ops/pg.conf", False),
        ("The integration tests need the PostgreSQL server running on port 5432 for 20 minutes",
         False),
        ("The flaky integration tests need the slow old PostgreSQL server running on port 5432",
         False),  # three new words of eleven: more than a fifth
    ],
)  # fmt: skip
def test_a_repeat_adds_no_name_number_entity_or_many_new_words(new: str, repeat: bool) -> None:
    assert adds_nothing(new, BASE) is repeat


def test_names_are_new_information() -> None:
    assert not adds_nothing("Bob prefers tabs over spaces in Python code",
                            "Alice prefers tabs over spaces in Python code")  # fmt: skip


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=16)
    return v / np.linalg.norm(v)


def test_burst_of_needs_the_same_session_scope_kind_role_and_window(make_memory) -> None:
    v = _unit(1)
    close = v + 0.1 * _unit(2)
    close /= np.linalg.norm(close)
    assert float(v @ close) >= BURST_COSINE
    src = Source(session="s1", role="assistant")
    old = make_memory(BASE, source=src, created_at=1_000_000)
    new = make_memory("The integration tests need a PostgreSQL server running on port 5432",
                 source=src, created_at=1_000_000 + 60_000)  # fmt: skip
    assert burst_of(new, close, [(old, v)]) == (old.id, pytest.approx(float(v @ close)))
    for changed in (
        replace(old, realm="elsewhere"),
        replace(old, agent_id="other"),
        replace(old, channel="c2"),
        replace(old, kind=Kind.CORRECTION),
        replace(old, source=Source(session="s1", role="user")),
        replace(old, created_at=new.created_at - BURST_WINDOW_MS - 1),
        replace(old, created_at=new.created_at + 1),  # not earlier
        replace(old, deleted_at=1),
        replace(old, superseded_by="01X"),
    ):
        assert burst_of(new, close, [(changed, v)]) is None, changed
    assert burst_of(new, _unit(3), [(old, v)]) is None  # not alike
    older = replace(old, id="00OLDER", created_at=old.created_at - 1000)
    assert burst_of(new, close, [(old, v), (older, v)])[0] == "00OLDER"  # the first is kept
