"""``graph``: spreading activation through shared entities and triplets, bounded."""

import time

from chitta.recall.lanes.graph import GraphLane
from chitta.store.ids import new_id
from chitta.store.records import Scope, Triplet


def test_reaches_memories_sharing_only_an_entity_then_a_hop_further(stock, context) -> None:
    seed, one, two, other = stock([
        "we moved to Lisbon in spring",       # the seed
        "the tram in Lisbon is yellow",       # shares Lisbon
        "a yellow Tram 28 ticket, kept",      # shares "tram 28"... not with the seed
        "dinner was pasta",                   # shares nothing
    ])  # fmt: skip
    hop = stock(["the Tram 28 ride from Lisbon"])[0]  # links Lisbon and "tram 28"
    ranked = dict(GraphLane(max_share=1.0).run(context(seeds=[seed])))
    assert one in ranked and hop in ranked and other not in ranked
    assert two in ranked  # reached at the second hop, through "tram 28"
    assert ranked[two] < ranked[hop]


def test_entities_named_too_widely_are_not_followed(store, stock, context) -> None:
    ids = stock([f"we saw Oliver, note {i}" for i in range(10)])
    assert GraphLane(max_share=1.0).run(context(seeds=[ids[0]]))
    assert GraphLane(max_share=0.1).run(context(seeds=[ids[0]])) == []


def test_triplets_carry_activation_between_entities(store, stock, context) -> None:
    seed, target = stock(["the office is in Lisbon", "we love Portugal in May"])
    assert GraphLane(max_share=1.0).run(context(seeds=[seed])) == []
    now = int(time.time() * 1000)
    store.add_triplets([Triplet(new_id(now), "work", "Lisbon", "located_in", "Portugal", 1.0,
                                now, None, None, now)])  # fmt: skip
    assert [i for i, _ in GraphLane(max_share=1.0).run(context(seeds=[seed]))] == [target]


def test_the_work_is_bounded_and_scope_is_kept(store, stock, context) -> None:
    ids = stock([f"Oliver and Bergen note {i}" for i in range(30)])
    full = GraphLane(max_share=1.0).run(context(seeds=ids[:1], depth=50))
    assert len(full) == 29
    assert len(GraphLane(max_share=1.0, budget=5).run(context(seeds=ids[:1], depth=50))) < 29
    hidden = GraphLane(max_share=1.0).run(
        context(seeds=ids[:1], scope=Scope("work", channel="elsewhere"))
    )
    assert hidden == []


def test_activation_in_an_attractor_basin_is_boosted(stock, context) -> None:
    seed = stock(["we booked Bergen and Oliver"])[0]
    basin = stock([f"saw Oliver in Bergen, day {i}" for i in range(4)])
    plain = dict(GraphLane(max_share=1.0, basin_boost=1.0).run(context(seeds=[seed])))
    boosted = dict(GraphLane(max_share=1.0).run(context(seeds=[seed])))
    assert boosted[basin[0]] == plain[basin[0]] * 1.15


def test_the_ranking_is_the_same_whatever_the_hash_seed(tmp_path) -> None:
    """Postings are sets; the lane sorts them, so a new process ranks exactly the same."""
    import subprocess
    import sys

    script = f"""
import time
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.graph import GraphLane
from chitta.store.confidence import Confidence
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Scope, Source
from chitta.store.sqlite import Store

with Store({str(tmp_path / "g.db")!r}) as store:
    if not store.exists("m0000"):
        text = "met Ann{{}} and Bo{{}} at Site{{}}"
        memories = [Memory(f"m{{i:04d}}", Kind.INSIGHT, text.format(i % 37, i % 23, i % 11),
                           "work", "", "", (), Source(), 1, 1, None, Confidence.initial(0.01),
                           0.7, "hot") for i in range(600)]
        store.insert([(m, None) for m in memories])
    ctx = LaneContext("q", (), None, Scope("work"), 40, store).with_seeds(["m0001", "m0002"])
    print(GraphLane(max_share=1.0, budget=300).run(ctx))
"""
    runs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env={"PYTHONHASHSEED": seed, "PATH": ""}, timeout=120)
        for seed in ("1", "2", "3")
    ]  # fmt: skip
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert runs[0].stdout.count("m0") > 10


def _triplet(s: str, p: str, o: str, source: str | None = None, weight: float = 1.0) -> Triplet:
    now = int(time.time() * 1000) - 1000
    return Triplet(new_id(now), "work", s, p, o, weight, now, None, source, now)


def test_activation_reaches_a_triplets_source_from_a_seed_naming_one_end(
    store, stock, context
) -> None:
    seed, source = stock(["we moved to Lisbon in spring", "the office city was settled"])
    assert GraphLane(max_share=1.0).run(context(seeds=[seed])) == []
    store.add_triplets([_triplet("Lisbon", "located_in", "Portugal", source=source)])
    assert [i for i, _ in GraphLane(max_share=1.0).run(context(seeds=[seed]))] == [source]


def test_a_seed_stating_a_triplet_reaches_memories_naming_its_other_end(
    store, stock, context
) -> None:
    # The seed names nothing an entity finder sees (lower case): only its triplet leads on.
    seed, target, other = stock(
        ["we moved to lisbon in spring", "we loved Portugal in May", "dinner was at Rossio"]
    )
    assert GraphLane(max_share=1.0).run(context(seeds=[seed])) == []
    store.add_triplets([_triplet("Lisbon", "located_in", "Portugal", source=seed)])
    ranked = [i for i, _ in GraphLane(max_share=1.0).run(context(seeds=[seed]))]
    assert ranked == [target] and other not in ranked


def test_an_invalidated_triplet_carries_nothing(store, stock, context) -> None:
    seed, target = stock(["the office is in Lisbon", "we love Portugal in May"])
    edge = _triplet("Lisbon", "located_in", "Portugal")
    store.add_triplets([edge])
    assert GraphLane(max_share=1.0).run(context(seeds=[seed]))
    store.invalidate_triplet(edge, int(time.time() * 1000) - 1)
    assert GraphLane(max_share=1.0).run(context(seeds=[seed])) == []


def test_a_busy_entity_is_read_up_to_the_bound_and_the_lane_says_so(store, stock, context) -> None:
    seed, heavy, light = stock(
        ["we ordered parts from Hub", "we unpacked W00049 today", "we unpacked W00000 today"]
    )
    store.add_triplets(
        [_triplet("Hub", "contains", f"W{i:05d}", weight=(i + 1) / 50) for i in range(50)]
    )
    ctx = context(seeds=[seed])
    ranked = dict(GraphLane(max_share=1.0, edges=5).run(ctx))
    assert heavy in ranked and light not in ranked
    assert "the 5 heaviest current ones among its 20 heaviest" in ctx.notes["graph"]
    full = context(seeds=[seed])
    assert light in dict(GraphLane(max_share=1.0).run(full)) and "graph" not in full.notes


def test_triplets_stated_under_an_alias_carry_activation(store, stock, context) -> None:
    """An edge of "New York City" reaches memories from a seed that names it "NYC"."""
    seed, target = stock(["we flew into NYC last week", "the United States visa took a month"])
    now = int(time.time() * 1000)
    store.add_triplets([Triplet(new_id(now), "work", "New York City", "located_in",
                                "United States", 1.0, now - 1, None, None, now)])  # fmt: skip
    assert GraphLane(max_share=1.0).run(context(seeds=[seed])) == []
    store.add_alias("work", "NYC", "nyc", "new york city")
    assert [i for i, _ in GraphLane(max_share=1.0).run(context(seeds=[seed]))] == [target]


DAY = 86_400_000


def _link(store, a: str, b: str, times: int, at: int) -> None:
    """``a`` and ``b`` used together ``times`` times, the last at ``at`` (ms)."""
    from chitta.store.access import AccessRecord

    for _ in range(times):
        store.record_access(AccessRecord((), at, together=(a, b), step=0.03))
    store.flush_access()


def test_memories_used_together_are_linked_and_the_link_fades_unused(store, stock, context):
    seed, used, other = stock(["we moved offices in spring", "the parking permit is blue",
                               "dinner was pasta"])  # fmt: skip
    lane = GraphLane(max_share=1.0)
    assert lane.run(context(seeds=[seed])) == []  # they share no entity: nothing to follow
    now = int(time.time() * 1000)
    _link(store, seed, used, 4, now)
    fresh = dict(lane.run(context(seeds=[seed], now=now)))
    assert set(fresh) == {used}  # seed 001's spread 0.5 × the link: min(1, 3 × 4 × 0.03)
    assert abs(fresh[used] - 0.5 * 0.36) < 1e-9
    later = dict(lane.run(context(seeds=[seed], now=now + 60 * DAY)))
    assert abs(later[used] - fresh[used] / 4) < 1e-9  # two half-lives of 30 days
    assert GraphLane(max_share=1.0, co_gain=0).run(context(seeds=[seed], now=now)) == []


def test_hebbian_links_are_bounded_per_memory_and_spread_a_hop_further(store, stock, context):
    seed, *partners = stock([f"plain note number {i}" for i in range(6)])
    now = int(time.time() * 1000)
    for i, partner in enumerate(partners):
        _link(store, seed, partner, i + 1, now)  # the last is the heaviest
    ranked = GraphLane(max_share=1.0, co_per=2, co_frontier=1).run(context(seeds=[seed], now=now))
    assert [i for i, _ in ranked] == [partners[-1], partners[-2]]
    far = stock(["a second plain note"])[0]
    _link(store, partners[-1], far, 1, now)
    reached = dict(GraphLane(max_share=1.0, co_per=2).run(context(seeds=[seed], now=now)))
    assert far in reached and reached[far] < reached[partners[-1]]
