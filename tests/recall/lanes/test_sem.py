"""``sem``: the nearest memories by their whole vector, each scored by its whole and its best
sentence together, so a memory one sentence of which answers the query rises."""

from __future__ import annotations

import numpy as np
from tests.conftest import memory

from chitta.embed.pieces import best_cosine, pack, pieces_by_id
from chitta.recall.lanes.base import LaneContext
from chitta.recall.lanes.sem import SemanticLane, with_best_piece
from chitta.recall.lanes.xr import CrossRealmLane
from chitta.store.base import Store
from chitta.store.records import Scope

TEAM = ("Quick update from the team sync. The release slipped a week because QA found flaky "
        "tests. Also, we decided to move the billing service from MySQL to PostgreSQL next "
        "quarter. Lunch is on Friday.")  # fmt: skip
ADVICE = "Database migrations should always be tested on a staging copy before production."
QUERY = "did we decide to migrate billing to a new database"


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_best_piece_lifts_the_whole_and_never_lowers_it() -> None:
    query = unit(1, 0)
    pieces = pack(np.stack([unit(0, 1), unit(1, 0.1)]))
    best = best_cosine(pieces, query)
    assert abs(best - float(unit(1, 0.1) @ query)) < 0.002
    assert with_best_piece(0.4, pieces, query) == (0.4 + best) / 2
    # A memory whose pieces are all further than its whole keeps its whole cosine.
    assert with_best_piece(0.9, pack(np.stack([unit(0, 1)])), query) == 0.9
    assert with_best_piece(0.4, None, query) == 0.4


def test_a_memory_whose_one_sentence_answers_outranks_one_alike_throughout(
    store: Store, embedder
) -> None:
    store.bind_model(embedder.identity())
    team, advice = memory(TEAM), memory(ADVICE)
    vectors = embedder.embed([TEAM, ADVICE]).vectors
    store.insert([(team, vectors[0]), (advice, vectors[1])])
    ctx = LaneContext(query=QUERY, terms=(), query_vector=embedder.embed([QUERY]).vectors[0],
                      scope=Scope("work"), depth=10, store=store)  # fmt: skip
    by_whole = SemanticLane().run(ctx)
    assert [i for i, _ in by_whole] == [advice.id, team.id]  # its whole is a blur
    store.set_pieces(pieces_by_id(embedder, [(team.id, TEAM), (advice.id, ADVICE)]))
    by_pieces = SemanticLane().run(ctx)
    assert [i for i, _ in by_pieces] == [team.id, advice.id]
    assert dict(by_pieces)[advice.id] == dict(by_whole)[advice.id]  # one sentence: no pieces


def test_other_realms_are_scored_by_their_best_sentence_too(store: Store, embedder) -> None:
    store.bind_model(embedder.identity())
    team, advice = memory(TEAM, realm="team"), memory(ADVICE, realm="ops")
    vectors = embedder.embed([TEAM, ADVICE]).vectors
    store.insert([(team, vectors[0]), (advice, vectors[1])])
    store.set_pieces(pieces_by_id(embedder, [(team.id, TEAM), (advice.id, ADVICE)]))
    ctx = LaneContext(query=QUERY, terms=(), query_vector=embedder.embed([QUERY]).vectors[0],
                      scope=Scope("home"), depth=10, store=store)  # fmt: skip
    assert [i for i, _ in CrossRealmLane().run(ctx)] == [team.id, advice.id]
