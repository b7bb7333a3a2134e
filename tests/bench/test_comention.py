"""Co-mention triplets: the entities one turn names, related pairwise, sourced by the turn."""

from dataclasses import replace

from chitta.bench.comention import PER_TURN, co_mention_triplets


def test_each_turn_relates_its_first_entities_pairwise(make_memory) -> None:
    turn = replace(make_memory("we saw Ada and Grace in Lisbon and Porto, then flew to Oslo"),
                   event_time=1_700_000_000_000)  # fmt: skip
    lonely = make_memory("we talked about Lisbon for a while")
    edges = co_mention_triplets([turn, lonely], now=1_800_000_000_000)
    pairs = {(t.subject, t.object) for t in edges}
    assert len(edges) == PER_TURN * (PER_TURN - 1) // 2  # the first four entities, pairwise
    assert ("ada", "grace") in pairs and all("oslo" not in p for p in pairs)
    assert {t.predicate for t in edges} == {"relates_to"}
    assert {t.source_memory for t in edges} == {turn.id}
    assert {t.valid_from for t in edges} == {1_700_000_000_000}
