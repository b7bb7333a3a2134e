"""``graph``: spreading activation from the seeds through shared entities and triplets
(seed 001, Spreading Activation: strength 0.5, decay 0.5, 3 hops).

Memories are linked when they name the same entity (store/entities.py: a proper name, an
identifier, a number with a unit); entities are linked by the current triplets of the realm;
and a triplet links to the memory that stated it (its source), which leads on to the
triplet's ends. Activation starts at the best few seeds (1 / rank), and each hop passes on
``strength × decay^(hop-1) × link weight`` to every memory one link further; a memory's
score is all the activation it received. This reaches memories that share no word with the
question, only a name with something that did: the second hop of a multi-hop question.

An entity named by many memories links little (a speaker's name links everything), so only
entities in at most ``max_share`` of the realm's memories (and at most ``max_members``) are
followed, weighted by 1 / ln(1 + memories naming it). The work per recall is bounded: at most
``budget`` memories visited, and ``edges`` triplets read per entity and side, heaviest first,
so a hub with 100,000 edges cannot make recall slow; the reply's ``bounded`` says when a bound
cut the spread. Activation that lands in an attractor's basin (the realm's densest clusters
of entities and triplets, recall/attractors.py) is multiplied by 1.15.

Memories an agent used together are linked too (Hebbian co-access, seed 001: hebbian
strength 0.03; recall/usage.py says what "used" means). Each hop, the ``co_frontier`` most
activated memories of the frontier pass activation to their ``co_per`` heaviest co-access
partners, the link's weight ``min(1, co_gain × weight × ½^(age / co_half_life_days))``: a
pair's weight halves every 30 days after its last use, so a link nobody uses fades. A store
where nothing was used together spreads exactly as without this.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chitta.recall.attractors import AttractorCache
from chitta.recall.lanes.base import LaneContext, scoped
from chitta.store.triplets import SCAN_FACTOR

if TYPE_CHECKING:
    from chitta.store.links import LinkIndex

DAY_MS = 86_400_000


def link_weight(weight: float, age_ms: int, half_life_ms: float, gain: float) -> float:
    """A Hebbian link's weight: the co-access ``weight``, halved every ``half_life_ms`` since
    its last increment, times ``gain``, at most 1 (a pair's age never counts below 0)."""
    faded = weight * 0.5 ** (max(0, age_ms) / half_life_ms) if half_life_ms > 0 else weight
    return min(1.0, gain * faded)


@dataclass(frozen=True, slots=True)
class GraphLane:
    name: str = "graph"
    derived: bool = True
    seeds: int = 5
    strength: float = 0.5  # seed 001 spread_strength
    decay: float = 0.5  # seed 001 spread_decay
    hops: int = 3  # seed 001 max_hops
    #: Entities named by more than this share of the realm's memories, or by more than
    #: ``max_members`` of them, are not followed: they link too much to mean anything.
    max_share: float = 0.03
    max_members: int = 200
    #: Memories visited per recall, at most; beyond it the spread stops where it is.
    budget: int = 5000
    #: Triplets followed per entity and side, heaviest first: a hub with 100,000 edges costs
    #: what this many cost, and the reply's ``bounded`` says when it cut.
    edges: int = 200
    basin_boost: float = 1.15  # seed 001: activation inside an attractor's basin
    #: Hebbian links (module docstring): frontier memories that follow theirs per hop, partners
    #: read per memory, the weight's gain, and its half-life when unused.
    co_frontier: int = 32
    co_per: int = 8
    co_gain: float = 3.0
    co_half_life_days: float = 30.0
    attractors: AttractorCache = field(default_factory=AttractorCache, compare=False)

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        links = ctx.store.links()
        realm = ctx.scope.realm
        share = self.max_share * ctx.store.term_stats().size(realm)
        limit = min(max(2.0, share), float(self.max_members))
        frontier = {seed: 1.0 / rank for rank, seed in enumerate(ctx.seeds[: self.seeds], 1)}
        starts = set(frontier)  # they pass activation on; spreading back to them says nothing
        reached = set(frontier)
        scores: dict[str, float] = {}
        visits = 0
        cut = False
        # The resonance learner's values for this recall, when it set them (learn/params.py).
        strength = ctx.tuning.get("spread_strength", self.strength)
        decay = ctx.tuning.get("spread_decay", self.decay)
        for hop in range(self.hops):
            passed = strength * decay**hop
            names, stated_cut = self._names(ctx, frontier, self.edges)
            related, capped = ctx.store.triplet_neighbours(
                realm, {n for ns in names.values() for n in ns}, self.edges
            )
            cut = cut or capped or stated_cut
            spread: dict[str, float] = {}
            used = self._used_with(ctx, frontier)
            for memory_id, activation in frontier.items():
                targets = self._targets(links, realm, names[memory_id], related, limit)
                for target, weight in [*targets, *used.get(memory_id, ())]:
                    # Sorted, so that sums and the budget's cut are the same in every process
                    # (a set's order depends on the string hash seed).
                    members = sorted(target) if isinstance(target, frozenset) else [target]
                    for other in members[: self.budget - visits]:
                        visits += 1
                        if other not in starts:
                            spread[other] = spread.get(other, 0.0) + activation * passed * weight
                    if visits >= self.budget:
                        break
                if visits >= self.budget:
                    break
            for memory_id, activation in spread.items():
                scores[memory_id] = scores.get(memory_id, 0.0) + activation
            frontier = {m: spread[m] for m in sorted(spread) if m not in reached}
            reached.update(frontier)
            if not frontier or visits >= self.budget:
                break
        if visits >= self.budget or cut:
            ctx.notes[self.name] = (
                f"bounded: stopped at {self.budget} memories visited"
                if visits >= self.budget
                else f"bounded: an entity or a memory has more triplets than were read (the "
                f"{self.edges} heaviest current ones among its {SCAN_FACTOR * self.edges} "
                "heaviest)"
            )
        if scores and self.basin_boost != 1.0:
            found = self.attractors.get(ctx.store, realm, limit)
            basins = set().union(*(a.members for a in found))
            for memory_id in basins & scores.keys():
                scores[memory_id] *= self.basin_boost
        return scoped(ctx, scores)

    def _used_with(
        self, ctx: LaneContext, frontier: Mapping[str, float]
    ) -> dict[str, list[tuple[str, float]]]:
        """The Hebbian links of the frontier's ``co_frontier`` most activated memories: by
        memory, (partner, link weight) of its ``co_per`` heaviest co-access partners."""
        gain = self.co_gain * ctx.tuning.get("hebbian", 1.0)  # the learner's multiplier
        if gain <= 0 or self.co_frontier <= 0 or self.co_per <= 0:
            return {}
        top = sorted(frontier, key=lambda m: (-frontier[m], m))[: self.co_frontier]
        now = int(time.time() * 1000) if ctx.now is None else ctx.now
        half_life_ms = self.co_half_life_days * DAY_MS
        return {
            memory_id: [(other, link_weight(w, now - at, half_life_ms, gain))
                        for other, w, at in partners]
            for memory_id, partners in ctx.store.co_partners(top, self.co_per).items()
            if partners
        }  # fmt: skip

    @staticmethod
    def _names(
        ctx: LaneContext, frontier: Mapping[str, float], cap: int
    ) -> tuple[dict[str, tuple[str, ...]], bool]:
        """The entities each frontier memory leads to: those it names, and the ends of the
        triplets it is the source of (at most ``cap`` of them, heaviest first); and whether
        that cap cut."""
        links = ctx.store.links()
        stated, cut = ctx.store.triplets_sourced_by(sorted(frontier), cap)
        out = {}
        for memory_id in frontier:
            ends = [e for s, o, _ in stated.get(memory_id, ()) for e in (s, o)]
            out[memory_id] = tuple(dict.fromkeys((*links.entities_of(memory_id), *ends)))
        return out, cut

    @staticmethod
    def _targets(
        links: LinkIndex,
        realm: str,
        names: tuple[str, ...],
        related: Mapping[str, list[tuple[str, float, str | None]]],
        limit: float,
    ) -> list[tuple[frozenset[str] | str, float]]:
        """Where a memory leading to ``names`` passes activation, with each link's weight:
        the memories naming those names; over the realm's current triplets, the memories
        naming the entity at the other end, and the memory that stated the triplet."""
        out: list[tuple[frozenset[str] | str, float]] = []
        for name in names:
            df = links.entity_df(realm, name)
            if 2 <= df <= limit:
                out.append((links.named_by(realm, name), 1.0 / math.log1p(df)))
            for entity, weight, source in related.get(name, ()):
                df = links.entity_df(realm, entity)
                if 1 <= df <= limit:
                    out.append((links.named_by(realm, entity), weight / math.log1p(max(df, 2))))
                if source is not None:
                    out.append((source, weight / math.log1p(2)))
        return out
