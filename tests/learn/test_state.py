"""A realm's learned state survives being written and read back exactly (learn/learner.py),
and a damaged one is refused as such."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.learn.learner import RealmState, _Strategy
from chitta.learn.posterior import Evidence

FINITE = st.floats(-1e6, 1e6, allow_nan=False)
EVIDENCE = st.builds(Evidence, st.floats(0, 1e6), FINITE)
BUCKETS = st.sampled_from(["short.prose.plain.rare", "mid.code.prefixed.common", "*"])
PARAMS = st.sampled_from(["balance", "tag", "lane:ctx", "spread_decay", "hebbian"])
STRATEGY = st.builds(
    _Strategy,
    st.dictionaries(BUCKETS, st.dictionaries(PARAMS, EVIDENCE, max_size=5), max_size=3),
    st.dictionaries(BUCKETS, st.lists(st.floats(0, 1e6), min_size=2, max_size=2), max_size=3),
)
STATES = st.builds(
    RealmState,
    st.integers(0, 10**9),
    st.booleans(),
    st.dictionaries(st.sampled_from(["hybrid", "field", "hybrid+rrf"]), STRATEGY, max_size=3),
)


@given(STATES)
def test_a_state_reads_back_as_it_was_written(state: RealmState) -> None:
    assert RealmState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    "text",
    ['{"version": 2, "events": 1, "off": false, "strategies": {}}', "[]",
     '{"version": 1, "events": 1, "off": false, "strategies": {"hybrid": {"evidence": '
     '{"b": {"balance": [1]}}, "baseline": {}}}}',
     '{"version": 1, "events": 1, "off": false, "strategies": {"hybrid": {"evidence": '
     '{"b": {"balance": [NaN, 1]}}, "baseline": {}}}}'],
)  # fmt: skip
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises((ValueError, KeyError, TypeError)):
        RealmState.from_json(text)
