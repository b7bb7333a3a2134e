"""A hub with 100,000 edges: analogy, spreading activation and a full recall read a bounded
part of it (the heaviest edges), answer from that part, and say that a bound cut the read.

Speed is measured by the benchmarks; here the bound shows in behaviour: ``bounded`` is set,
and what is returned comes from the hub's heaviest edges only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.graph import GraphLane
from chitta.relations.analogy import FANOUT_CAP, recall_analogy
from chitta.store import triplets as table
from chitta.store.records import Scope, Triplet
from chitta.wire import result_to_dict

EDGES = 100_000
REALM = "default"


@dataclass(frozen=True)
class Hub:
    chitta: Chitta
    catalogue: str  # the memory that stated every hub edge
    mention: str  # a memory naming the hub
    heavy: str  # a memory naming the hub's heaviest neighbour
    light: str  # a memory naming its lightest
    seconds: float  # how long the 100,001 rows took to insert


def _part(i: int) -> str:
    return f"W{i:05d}"


@pytest.fixture(scope="module")
def hub(tmp_path_factory, embedder) -> Iterator[Hub]:
    settings = Settings(home=tmp_path_factory.mktemp("hub") / "home")
    with Chitta.open(settings, embedder=embedder) as c:
        ids = [c.remember(text).id for text in (
            "our catalogue from Hub lists every part we stock",
            "We ordered spare parts from Hub on Monday",
            "we unpacked W99999 and it works",
            "we unpacked W00000 and it was dented",
        )]  # fmt: skip
        now = c.clock() - 1000
        # Distinct weights, heaviest last: the heaviest edges are known without reading them.
        rows = [Triplet(f"hub{i:06d}", REALM, "Hub", "contains", _part(i), (i + 1) / EDGES,
                        now, None, ids[0], now) for i in range(EDGES)]  # fmt: skip
        rows.append(Triplet("ab", REALM, "Alpha", "contains", "Beta", 0.5, now, None, None, now))
        rows.append(Triplet("gd", REALM, "Gamma", "imports", "Delta", 1.0, now, None, None, now))
        start = time.perf_counter()
        c.store.add_triplets(rows)
        yield Hub(c, *ids, seconds=time.perf_counter() - start)


def test_the_hub_is_inserted_in_one_batch(hub: Hub) -> None:
    assert hub.chitta.store.counts()["triplets"] == EDGES + 2
    assert hub.seconds < 60  # a generous ceiling: a few seconds is usual (speed: benchmarks)


def test_analogy_over_the_hub_is_bounded_and_answers_with_its_heaviest_edges(hub: Hub) -> None:
    result = hub.chitta.recall_analogy("alpha", "beta", "Hub", limit=10)
    assert not result.abstained and result.bounded
    assert f"its {FANOUT_CAP} heaviest current ones" in result.bounded[0]
    assert result.as_dict()["bounded"] is True
    assert [a.entity for a in result.answers] == [_part(EDGES - 1 - i) for i in range(10)]
    for answer in result.answers:
        [support] = answer.supports
        assert support.ab.id == "ab" and hub.chitta.store.triplet(support.cd.id) == support.cd
        assert support.cd.subject == "Hub" and support.cd.object == answer.entity
        assert answer.score == pytest.approx(0.5 * support.cd.weight)


def test_a_smaller_bound_reads_fewer_rows_still_the_heaviest(hub: Hub) -> None:
    store, now = hub.chitta.store, hub.chitta.clock()
    result = recall_analogy(store, "alpha", "beta", "hub", now=now, limit=50, cap=5)
    assert result.bounded
    assert [a.entity for a in result.answers] == [_part(EDGES - 1 - i) for i in range(5)]


def test_the_hub_as_a_or_as_c_without_the_relation(hub: Hub) -> None:
    as_a = hub.chitta.recall_analogy("Hub", "W00000", "alpha")
    assert [a.key for a in as_a.answers] == ["beta"] and not as_a.bounded
    no_edge = hub.chitta.recall_analogy("gamma", "delta", "hub")
    assert no_edge.reason_code == "c_no_edge" and "over: contains" in no_edge.reason


def test_the_sql_reads_of_the_hub_stop_at_their_bound(hub: Hub) -> None:
    store, now = hub.chitta.store, hub.chitta.clock()
    out = store.triplets_outgoing(REALM, ["hub"], ["contains"], now, 7)
    assert out.cut and [t.object for t in out.rows] == [_part(EDGES - 1 - i) for i in range(7)]
    near, cut = store.triplet_neighbours(REALM, ["hub"], 7)
    assert cut and len(near["hub"]) == 7
    stated, cut = store.triplets_sourced_by([hub.catalogue], 7)
    assert cut and [o for _, o, _ in stated[hub.catalogue]] == [
        table.entity_key(_part(EDGES - 1 - i)) for i in range(7)
    ]
    assert store.out_predicates(REALM, ["hub"], now) == (["contains"], False)


@pytest.mark.parametrize("seed", ["mention", "catalogue"])
def test_spreading_from_the_hub_is_bounded_and_follows_its_heaviest_edges(
    hub: Hub, seed: str
) -> None:
    store = hub.chitta.store
    ctx = LaneContext("q", (), None, Scope(REALM), 20, store).with_seeds([getattr(hub, seed)])
    ranked = dict(GraphLane(max_share=1.0).run(ctx))
    assert ctx.notes["graph"].startswith("bounded:")
    assert hub.heavy in ranked  # reached over the hub's heaviest edge
    assert hub.light not in ranked  # its lightest edge was beyond the bound


def test_a_field_recall_over_the_hub_says_graph_was_bounded(hub: Hub) -> None:
    result = hub.chitta.recall("what did we order from Hub?", strategy="field", record=False)
    assert "graph" in result.bounded
    reply = result_to_dict(result)
    assert reply["bounded"]["graph"].startswith("bounded:")
    assert hub.mention in [h["id"] for h in reply["hits"]]
