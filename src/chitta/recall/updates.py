"""Knowledge updates: among the ranked hits, an older memory with a newer one on the same
subject is marked as possibly outdated, naming the newer one (issue 19, part 4).

Two memories are taken to be on the same subject when they are in the same scope (realm,
agent, channel), name a common entity (store/entities.py) that is rare in their realm, and
their vectors' cosine is at least :data:`SIMILARITY`; the one whose time (``event_time``,
else ``created_at``) is later updates the other, unless it is a near-copy naming nothing new
(a restatement, which lateral inhibition handles). A recorded supersession
(``superseded_by``, shown only under ``include_superseded``) is an update whatever the
similarity. This is the "knowledge update" of LongMemEval (Wu et al., ICLR 2025): a later
session restates a fact an earlier one gave ("I just reached Premier Gold" after "I'm
Premier Silver").

The older hit's note names the newest of its updates. The stage never removes a hit; asked to
(``RecallConfig.newer_first``, off by default: on both development sets' held-out halves it
cost more than the tuning rule allows), it also moves each older hit's updates ranked below
it to just above it (in their own order).
:func:`find_updates` is pure; :func:`mark_updates` reads what it needs from the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, TypeVar

import numpy as np

from chitta.recall.inhibition import cosines
from chitta.store.base import Store
from chitta.store.entities import entities
from chitta.store.records import Memory
from chitta.store.terms import TermStats, words

#: The least cosine of two memories on the same subject. Chosen on the tuning halves of
#: LoCoMo and LongMemEval (docs/recall.md, "Knowledge updates").
SIMILARITY = 0.6
#: The least number of entities two memories on the same subject both name.
SHARED_ENTITIES = 1
#: Only rare entities count: one named (by its rarest word) in more than this fraction of the
#: realm's memories, or more than :data:`RARE_FLOOR`, says little about the subject (a
#: speaker's name in every other turn of a chat; LoCoMo's pairs were mostly such names).
RARE_FRACTION = 0.01
RARE_FLOOR = 2
#: A newer memory this close that names nothing the older does not is a restatement, not an
#: update (seed 001's near-duplicate cosine, where lateral inhibition starts).
RESTATEMENT = 0.85


@dataclass(frozen=True, slots=True)
class Item:
    """What the stage reads of one hit."""

    id: str
    scope: tuple[str, str, str]  # realm, agent, channel: updates never cross scopes
    time: int  # when it happened, else when it was stored (ms)
    entities: frozenset[str]
    vector: np.ndarray | None
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class Updates:
    """The new order (indices into the input) and, per older hit's id, its newer one's id."""

    order: tuple[int, ...]
    newer: Mapping[str, str]


def same_subject(old: Item, new: Item, cosine: float, *, similarity: float, shared: int) -> bool:
    """Whether ``new`` says something newer on what ``old`` is about (their vectors' cosine
    given): same scope, later, at least ``shared`` common entities, a cosine of at least
    ``similarity``, and not a mere restatement (:data:`RESTATEMENT`)."""
    return (
        cosine >= similarity
        and old.scope == new.scope
        and new.time > old.time
        and len(old.entities & new.entities) >= shared
        and (cosine < RESTATEMENT or not new.entities <= old.entities)
    )


def find_updates(
    items: Sequence[Item], *, similarity: float = SIMILARITY, shared: int = SHARED_ENTITIES
) -> Updates:
    """Reorder ``items`` (best first) so that each one's updates come before it, and name
    the newest update of each updated one (its ``superseded_by`` when recorded)."""
    sims = cosines([item.vector for item in items])
    at = {item.id: i for i, item in enumerate(items)}
    updaters: list[list[int]] = []
    newer: dict[str, str] = {}
    for i, old in enumerate(items):
        close = np.flatnonzero(sims[i] >= similarity)
        mine = [int(j) for j in close
                if same_subject(old, items[j], float(sims[i, j]), similarity=similarity,
                                shared=shared)]  # fmt: skip
        if old.superseded_by is not None:
            newer[old.id] = old.superseded_by  # recorded: named even when not among the hits
            if old.superseded_by in at and at[old.superseded_by] not in mine:
                mine.append(at[old.superseded_by])
        elif mine:
            newer[old.id] = items[max(mine, key=lambda j: (items[j].time, -j))].id
        updaters.append(sorted(mine))
    order: list[int] = []
    placed: set[int] = set()
    for i in range(len(items)):
        _place(i, updaters, order, placed, set())
    return Updates(tuple(order), MappingProxyType(newer))


def _place(i: int, updaters: list[list[int]], order: list[int], placed: set[int],
           path: set[int]) -> None:  # fmt: skip
    """Place ``i`` after its updates not yet placed (and theirs before them); ``path``
    breaks cycles (a recorded supersession against the times)."""
    if i in placed or i in path:
        return
    path.add(i)
    for j in updaters[i]:
        _place(j, updaters, order, placed, path)
    placed.add(i)
    order.append(i)


class _HasMemory(Protocol):
    @property
    def memory(self) -> Memory: ...


H = TypeVar("H", bound=_HasMemory)


def mark_updates(
    store: Store,
    hits: Sequence[H],
    move: bool = False,
    vectors: Mapping[str, np.ndarray] | None = None,
) -> tuple[list[H], dict[str, str]]:
    """Each older hit's newer one's id, and ``hits`` in :func:`find_updates`' order when
    ``move`` (else as ranked). ``vectors`` holds the hits' vectors when the caller has read
    them already (the pipeline's assessment stage); else they are read here."""
    if len(hits) < 2 and not any(h.memory.superseded_by for h in hits):
        return list(hits), {}
    if vectors is None:
        vectors = store.vectors_for([h.memory.id for h in hits])
    stats = store.term_stats()
    found = find_updates([item_of(h.memory, vectors.get(h.memory.id), stats) for h in hits])
    return [hits[i] for i in found.order] if move else list(hits), dict(found.newer)


def item_of(memory: Memory, vector: np.ndarray | None, stats: TermStats) -> Item:
    """The stage's view of one memory: its rare entities (:func:`rare`) among the rest."""
    return Item(
        id=memory.id,
        scope=(memory.realm, memory.agent_id, memory.channel),
        time=memory.event_time if memory.event_time is not None else memory.created_at,
        entities=rare(entities(memory.content), memory.realm, stats),
        vector=vector,
        superseded_by=memory.superseded_by,
    )


def rare(names: Iterable[str], realm: str, stats: TermStats) -> frozenset[str]:
    """The entities of ``names`` whose rarest word is in at most
    max(:data:`RARE_FLOOR`, :data:`RARE_FRACTION` × the realm's size) of its memories."""
    most = max(RARE_FLOOR, RARE_FRACTION * stats.size(realm))
    return frozenset(n for n in names
                     if min((stats.df(realm, w) for w in words(n)), default=0) <= most)  # fmt: skip
