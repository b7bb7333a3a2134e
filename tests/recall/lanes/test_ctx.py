"""``ctx``: neighbouring turns of the best seeds, session priming and session topics."""

from chitta.recall.lanes.ctx import ContextLane
from chitta.store.records import Scope


def test_the_turns_around_a_seed_rank_by_distance(store, stock, context) -> None:
    turns = stock([f"turn {i} of the chat" for i in range(6)])
    ranked = ContextLane(span=2, own=0.0).run(context(seeds=[turns[2]]))
    assert [i for i, _ in ranked[:2]] == sorted([turns[1], turns[3]])
    assert {i for i, _ in ranked[2:]} == {turns[0], turns[4]}
    assert dict(ranked)[turns[1]] == 1.0 and dict(ranked)[turns[0]] == 0.5


def test_a_seed_stays_above_the_turns_it_lifts(store, stock, context) -> None:
    turns = stock([f"turn {i} of the chat" for i in range(5)])
    ranked = ContextLane(span=1).run(context(seeds=[turns[2], turns[0]]))
    # Each seed own / rank, each neighbour 1 / (rank x distance), summed.
    assert ranked[0] == (turns[2], 3.0)
    assert dict(ranked) == {turns[2]: 3.0, turns[0]: 1.5, turns[1]: 1.0 + 0.5, turns[3]: 1.0}


def test_a_better_seed_lends_its_neighbours_more(store, stock, context) -> None:
    first = stock(["chat A one", "chat A two"])
    second = stock(["chat B one", "chat B two"])
    ranked = ContextLane(span=1, own=0.0).run(context(seeds=[second[0], first[0]]))
    assert [i for i, _ in ranked] == [second[1], first[1]]


def test_priming_and_topics_add_their_boosts_to_the_pool(store, stock, context) -> None:
    pool = stock(["notes about Norway trip", "notes about Italy trip", "notes about cars"])
    lane = ContextLane(seeds=0)  # no neighbours: only priming and topics
    ranked = dict(lane.run(context(seeds=pool, primed=(pool[1],), topics=("norway",))))
    assert ranked == {pool[1]: lane.priming, pool[0]: lane.topic}


def test_neighbours_outside_the_scope_are_not_returned(store, stock, context) -> None:
    turns = stock(["agent turn one", "agent turn two"], agent_id="a1")
    scoped = context(seeds=[turns[0]], scope=Scope("work", agent_id="a2"))
    assert ContextLane(own=0.0).run(scoped) == []  # (a real seed is in scope)
    assert ContextLane(own=0.0).run(context(seeds=[turns[0]])) == [(turns[1], 1.0)]


def test_long_neighbours_are_not_lifted(store, stock, context) -> None:
    long_reply = " ".join(["word"] * 101)
    turns = stock(["did you go?", long_reply, "yes we went", " ".join(["word"] * 100)])
    ranked = dict(ContextLane(span=1, own=0.0).run(context(seeds=[turns[0], turns[2]])))
    assert turns[1] not in ranked  # 101 words: found by its own words or not at all
    assert ranked == {turns[3]: 0.5}  # 100 words: turns[2]'s neighbour, lifted at rank 2
    unbounded = dict(ContextLane(span=1, own=0.0, lift_words=None).run(context(seeds=[turns[0]])))
    assert turns[1] in unbounded
