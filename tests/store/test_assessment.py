"""One call answers a recall's assessment stage (store/assessment.py): the same vectors, term
matches and keyword statistics as the three reads it bundles, on each backend."""

from __future__ import annotations

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.store.assessment import AssessmentRequest
from chitta.store.base import Store

MODEL = ModelIdentity("test-model", 4, "0" * 64)


@pytest.fixture
def filled(store: Store, make_memory) -> tuple[Store, list[str]]:
    texts = ["kafka retention is seven days", "the kafka brokers moved", "postgres vacuum runs",
             "retention of logs in kafka"]  # fmt: skip
    rng = np.random.default_rng(7)
    items = []
    for text in texts:
        v = rng.normal(size=4).astype(np.float32)
        items.append((make_memory(text), v / np.linalg.norm(v)))
    items.append((make_memory("kafka in another realm", realm="other"), items[0][1]))
    store.bind_model(MODEL)
    store.insert(items)
    return store, [m.id for m, _ in items]


def test_the_one_call_answers_as_the_three_reads(filled) -> None:
    store, ids = filled
    terms, words = ("kafka", "retention", "seven days"), ("retention", "vacuum", "brokers")
    got = store.assessment_reads(AssessmentRequest(
        "work", vectors=ids[:3], terms=words, holders=ids, frequencies=terms
    ))  # fmt: skip
    want = store.vectors_for(ids[:3])
    assert set(got.vectors) == set(want) == set(ids[:3])
    for i in want:
        np.testing.assert_array_equal(got.vectors[i], want[i])
    assert got.matches == store.term_matches(words, ids)
    assert got.matches[ids[0]] == {"retention"} and got.matches[ids[2]] == {"vacuum"}
    assert (got.size, got.df) == store.keyword_frequencies(terms, "work")
    assert got.size == 4 and got.df == {"kafka": 3, "retention": 2, "seven days": 1}


def test_what_is_not_asked_for_is_not_read(filled) -> None:
    store, ids = filled
    got = store.assessment_reads(AssessmentRequest("work", vectors=ids[:1]))
    assert set(got.vectors) == {ids[0]}
    assert not got.matches and got.size is None and not got.df
    empty = store.assessment_reads(AssessmentRequest("work", frequencies=()))
    assert not empty.vectors and empty.size == 4 and not empty.df


def test_term_matches_read_phrases_stems_and_tags_as_fts5_does(store, make_memory) -> None:
    memories = [make_memory("We were deploying the parse_tags fix"),
                make_memory("tags parse here"),
                make_memory("nothing at all", tags=("deploy",))]  # fmt: skip
    store.bind_model(MODEL)
    store.insert([(m, None) for m in memories])
    ids = [m.id for m in memories]
    got = store.term_matches(["deployed", "parse_tags", "zebra"], ids)
    # "deployed" and "deploying" share FTS5's stem; "parse_tags" is the phrase "pars tag"
    # (in order: the second memory holds both words the other way round); tags count.
    assert got == {ids[0]: {"deployed", "parse_tags"}, ids[2]: {"deployed"}}
