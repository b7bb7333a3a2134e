"""A realm's keyword scores use the realm's own statistics, and recall stays in its realm.

Issue 17: FTS5's ``bm25()`` took N, document frequencies and the average length over the whole
table, so the same query in the same realm ranked differently once another realm's memories
came in. Each property here adds memories to other realms and checks that nothing about the
realm's answer moved: ids, order and scores, exactly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.kw import KeywordLane, query_terms
from chitta.recall.lanes.tag import TagLane
from chitta.recall.result import RecallResult
from chitta.store.base import Store
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Scope, Source

WORDS = ["otter", "river", "stone", "kayak", "heron", "willow", "bridge", "mill", "fog", "moss"]
NOW = 1_800_000_000_000

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
tags = st.lists(st.sampled_from(WORDS[:4]), max_size=2, unique=True).map(tuple)
home_memories = st.lists(st.tuples(texts, tags), min_size=1, max_size=12)
other_memories = st.lists(
    st.tuples(texts, tags, st.sampled_from(["elsewhere", "third"]), st.booleans()),
    min_size=1,
    max_size=30,
)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


def note(text: str, **fields: object) -> Memory:
    """A live memory of realm 'home' stored at NOW; ``fields`` override any attribute."""
    base = Memory(
        id=new_id(NOW), kind=Kind.INSIGHT, content=f"note {text}", realm="home", agent_id="",
        channel="", tags=(), source=Source(), created_at=NOW, updated_at=NOW, event_time=None,
        confidence=Confidence.initial(0.01), strength=0.7, tier="hot", decayed_at=NOW,
    )  # fmt: skip
    return replace(base, **fields)


def home(items: list[tuple[str, tuple[str, ...]]]) -> list[Memory]:
    return [note(text, tags=t) for text, t in items]


def others(items: list[tuple[str, tuple[str, ...], str, bool]]) -> list[Memory]:
    return [note(text, realm=realm, tags=t, deleted_at=NOW if gone else None)
            for text, t, realm, gone in items]  # fmt: skip


def lanes(store: Store, query: str) -> dict[str, list[tuple[str, float]]]:
    """The keyword and tag lanes' rankings (ids and raw scores) in realm 'home', and the time
    cue's keyword half over a period holding them all."""
    terms = tuple(query_terms(query))
    ctx = LaneContext(query, terms, None, Scope("home"), 40, store)
    period = store.period_keyword_search(terms, Scope("home"), 0, NOW + 1, 40,
                                         include_superseded=False)  # fmt: skip
    return {"kw": KeywordLane().run(ctx), "tag": TagLane().run(ctx), "period": period}


#: A new store per example (``fresh_stores``) is what the property needs, not the fixture.
ONE_STORE_PER_EXAMPLE = [HealthCheck.function_scoped_fixture]


@settings(max_examples=60, deadline=None, suppress_health_check=ONE_STORE_PER_EXAMPLE)
@given(home_memories, other_memories, queries)
def test_other_realms_never_change_a_realms_keyword_lanes(
    fresh_stores, mine, theirs, query
) -> None:
    """Property: adding memories (live or forgotten) to other realms changes neither the
    ranking nor a single score of the keyword and tag lanes in this realm."""
    with fresh_stores() as store:
        store.insert([(m, None) for m in home(mine)])
        before = lanes(store, query)
        store.insert([(m, None) for m in others(theirs)])
        assert lanes(store, query) == before


def answer(result: RecallResult) -> tuple[list, list[float]]:
    """What a recall says about its hits: ids with each lane's rank, and the scores (fused,
    final, each lane's raw score, and the keyword ceiling the gate normalises by)."""
    order = [(h.memory.id, sorted((n, c.rank) for n, c in h.lanes.items())) for h in result.hits]
    scores = [x for h in result.hits for x in (h.score, h.final)]
    scores += [h.lanes[n].raw for h in result.hits for n in sorted(h.lanes)]
    return order, scores + [result.kw_ceiling or 0.0]


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, *ONE_STORE_PER_EXAMPLE])  # fmt: skip
@given(st.lists(st.tuples(texts, tags), min_size=1, max_size=12, unique_by=lambda i: i[0]),
       other_memories, queries)  # fmt: skip
def test_other_realms_never_change_a_recall(fresh_stores, embedder, mine, theirs, query) -> None:
    """Property, through the whole pipeline: a keyword and a hybrid recall in a realm return
    the same hits in the same order with the same scores after other realms gained memories.
    Keyword scores are equal exactly; a cosine may move in its last float32 bits, since the
    vector index multiplies one matrix of every realm's vectors (hence distinct texts here:
    no two memories of the realm tie on their vectors)."""
    with fresh_stores() as store:
        store.bind_model(embedder.identity())
        chitta = Chitta(store, embedder, clock=lambda: NOW)

        def insert(ms: list[Memory]) -> None:
            vectors = embedder.embed([m.content for m in ms]).vectors
            store.insert([(m, np.asarray(v)) for m, v in zip(ms, vectors, strict=True)])

        def recalls() -> list[tuple[list, list[float]]]:
            return [answer(chitta.recall(query, realm="home", strategy=s, record=False))
                    for s in ("keyword", "hybrid")]  # fmt: skip

        insert(home(mine))
        before = recalls()
        insert(others(theirs))
        after = recalls()
        assert [order for order, _ in after] == [order for order, _ in before]
        assert after[0][1] == before[0][1]  # keyword only: exactly
        # hybrid's rsf divides a cosine's distance from the lane's best by the lane's span
        # (at least half the best), so a last-bit change of a cosine may come out a
        # few times larger in the fused score; a change of any real size would be far above.
        # A score near zero (a memory at the lane's far end) moves by as few absolute bits
        # but many relative ones: hence an absolute floor of 1e-6 on scores of order 1.
        np.testing.assert_allclose(after[1][1], before[1][1], rtol=1e-5, atol=1e-6)


def test_a_realms_scores_stay_put_when_a_big_realm_shares_its_words(store: Store) -> None:
    """The issue's case: a query in a small realm, then a large realm full of its words."""
    mine = home([("otter river", ()), ("otter stone stone", ()), ("heron", ())])
    store.insert([(m, None) for m in mine])
    before = lanes(store, "otter stone")
    crowd = others([(f"otter {'river ' * (i % 5)}", (), "elsewhere", False) for i in range(200)])
    store.insert([(m, None) for m in crowd])
    assert lanes(store, "otter stone") == before
    assert [mid for mid, _ in before["kw"]] == [mine[1].id, mine[0].id]


# --- the field strategy's scope ----------------------------------------------------------------


def test_field_stays_in_its_realm_unless_cross_realm_asks(chitta: Chitta) -> None:
    """README: nothing from another scope is returned unless `--cross-realm` asks, whatever
    the strategy."""
    chitta.remember("The deploy script lives in ops/deploy.sh", realm="demo")
    away = chitta.remember("The staging deploy script is tools/ship.sh", realm="ops").id
    plain = chitta.recall("deploy script", realm="demo", strategy="field")
    assert "xr" not in plain.lanes_run
    assert {h.memory.realm for h in plain.hits} == {"demo"}
    wide = chitta.recall("deploy script", realm="demo", strategy="field", cross_realm=True)
    assert "xr" in wide.lanes_run and away in [h.memory.id for h in wide.hits]
