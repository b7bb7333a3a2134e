"""What every lane receives and returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from chitta.store.records import Memory, Scope

if TYPE_CHECKING:
    from chitta.store.base import Store


@dataclass(frozen=True, slots=True)
class LaneContext:
    """One recall's inputs, shared by its lanes.

    ``seeds`` is empty for the lanes that search the store from the query alone; the lanes
    that work outward from what those found (``derived``: graph, ctx, common, dated) run
    second and get the first fusion's candidates in it, best first.
    """

    query: str
    terms: tuple[str, ...]  # keyword terms: the query's distinctive words
    query_vector: np.ndarray | None  # the embedding of the query's distinctive text
    scope: Scope
    depth: int  # how many candidates each lane returns at most
    store: Store
    common: tuple[str, ...] = ()  # query words too common in the realm to search by
    session: str | None = None  # the agent session asking, for session priming
    primed: Sequence[str] = ()  # memories the session touched lately, newest first
    topics: tuple[str, ...] = ()  # distinctive words of the session's recent queries
    seeds: tuple[str, ...] = ()
    now: int | None = None  # the recall's "now" in ms (None: the clock's), for decay
    #: The learner's values for this recall (learn/params.py): the graph lane reads its own.
    tuning: Mapping[str, float] = field(default_factory=dict)
    _loaded: dict[str, Memory | None] = field(default_factory=dict, compare=False, repr=False)
    #: What a lane wants the reply to say, by lane: that a bound cut its work (graph).
    notes: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def with_seeds(self, seeds: Sequence[str]) -> LaneContext:
        """This context for the derived lanes, seeded with a first fusion's candidates."""
        return replace(self, seeds=tuple(seeds))  # the loaded memories and notes are shared

    def memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Live memories by id, loaded once per recall however many lanes ask (an id found
        missing or forgotten is remembered as such, not asked for again)."""
        missing = [i for i in ids if i not in self._loaded]
        if missing:
            found = self.store.get_many(missing)
            self._loaded.update({i: found.get(i) for i in missing})
        return {i: m for i in ids if (m := self._loaded[i]) is not None}


class Lane(Protocol):
    """A way of finding candidates; returns (memory id, raw score), best first.

    ``derived`` lanes run after the others, from the candidates those found (``ctx.seeds``).
    """

    name: str
    derived: bool

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]: ...


def in_scope(memory: Memory, scope: Scope) -> bool:
    """Whether ``memory`` lies in ``scope`` (an axis left ``None`` is not filtered)."""
    return (
        memory.realm == scope.realm
        and (scope.agent_id is None or memory.agent_id == scope.agent_id)
        and (scope.channel is None or memory.channel == scope.channel)
    )


def scoped(ctx: LaneContext, scores: dict[str, float]) -> list[tuple[str, float]]:
    """``scores`` as a ranking, best first, keeping only live memories in the recall's scope.

    Derived lanes reach memories through links that ignore agent and channel, so everything
    they found beyond the seeds (which are in scope already) is checked against the file.
    """
    seeds = set(ctx.seeds)
    loaded = ctx.memories([i for i in scores if i not in seeds])
    kept = {i: s for i, s in scores.items()
            if i in seeds or (i in loaded and in_scope(loaded[i], ctx.scope))}  # fmt: skip
    ranked = sorted(kept.items(), key=lambda item: (-item[1], item[0]))
    return ranked[: ctx.depth]
