"""Triplets for LoCoMo, derived without a model: two entities named in one turn are related.

LoCoMo holds conversations, not a knowledge graph, so to measure spreading activation over
triplets on it (``chitta bench locomo --triplets co-mention``) each turn that names two or
more entities (store/entities.py) states ``relates_to`` edges between the first
``PER_TURN`` of them, with the turn as the edges' source memory. It is the crudest relation
extractor there is — a stand-in for the triplets an agent would store — and it is named as
such in the results.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from chitta.store.entities import entities
from chitta.store.ids import new_id
from chitta.store.records import Memory, Triplet

#: Entities of one turn that are related pairwise (so at most 6 edges a turn).
PER_TURN = 4
WEIGHT = 0.5


def co_mention_triplets(memories: Iterable[Memory], now: int) -> list[Triplet]:
    """``relates_to`` edges between the entities each memory names, sourced by it."""
    out = []
    for m in memories:
        names = entities(m.content)[:PER_TURN]
        valid = m.event_time if m.event_time is not None else m.created_at
        for a, b in combinations(names, 2):
            out.append(Triplet(new_id(now), m.realm, a, "relates_to", b, WEIGHT, valid, None,
                               m.id, now))  # fmt: skip
    return out
