"""``ep``: episodes (sessions) searched as units, then their best turns (seed 001, Theme System:
two-stage retrieval, with the episode as the unit).

A question is often about a conversation as a whole ("the chat where we planned the move")
while no one turn of it says so. Stage 1 scores every episode of the scope by the cosine of
the query with the episode's centroid: the mean of its live turns' unit vectors, normalised
(no summary model; the centroid of unit vectors is the direction that is closest on average
to all of them). Stage 2 ranks the turns of the best :data:`EPISODES` episodes by their own
cosine with the query plus their episode's (so a turn of the best episode leads a turn of
equal cosine from a worse one).

The representation is computed at query time from the store (``episode_members`` and the
live vectors), so it is current with every write and forget by construction: on a realm of
LoCoMo's or LongMemEval's size (500-600 turns, 30-50 episodes) that is 3-7 ms, growing with
the realm's turns (about 0.6 s at 10,000). Not in ``hybrid``: it lowered recall@10 there
(docs/benchmarks.md, "The episode lane"); it is in ``field``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chitta.recall.lanes.base import LaneContext

#: Episodes expanded in stage 2. A LoCoMo question's evidence lies in one or two sessions
#: and a LongMemEval question's in one to three; three keeps the lane to a few sessions'
#: turns (about 30-60), which RRF then weighs by rank.
EPISODES = 3
#: The best turns of each expanded episode the lane returns; None: all of them (up to the
#: lane's depth). Capping them (3 of 3 episodes, 5 of 1, 2 of 5) was tried inside hybrid on
#: both tuning halves; none made the lane pay (docs/benchmarks.md).
TURNS: int | None = None
#: With fewer episodes (with vectors) than this the stage-1 choice says nothing (one episode
#: is the whole scope): the lane returns nothing rather than repeat the vector lane.
MIN_EPISODES = 2


@dataclass(frozen=True, slots=True)
class EpisodeLane:
    name: str = "ep"
    derived: bool = False  # searches the store from the query alone
    episodes: int = EPISODES
    #: How much of the episode's cosine a turn's score carries (0: the turn's cosine alone).
    episode_weight: float = 1.0
    #: The best turns taken from each episode expanded (None: all of them, up to the depth).
    turns: int | None = TURNS

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if ctx.query_vector is None:
            return []
        members = ctx.store.episode_members(ctx.scope)
        if len(members) < MIN_EPISODES:
            return []  # (fewer episodes cannot hold enough with vectors either)
        vectors = ctx.store.vectors_for([i for ids in members.values() for i in ids])
        units = [kept for ids in members.values() if (kept := [i for i in ids if i in vectors])]
        if len(units) < MIN_EPISODES:
            return []
        ids = [i for unit in units for i in unit]
        matrix = np.stack([vectors[i] for i in ids]).astype(np.float32, copy=False)
        query = ctx.query_vector.astype(np.float32)
        sims = matrix @ query
        starts = np.cumsum([0, *(len(unit) for unit in units[:-1])])
        centroids = np.add.reduceat(matrix, starts, axis=0)
        norms = np.linalg.norm(centroids, axis=1)
        norms[norms == 0.0] = np.inf  # turns that cancel out: an episode that matches nothing
        episode_scores = (centroids @ query) / norms
        order = sorted(range(len(units)), key=lambda e: (-episode_scores[e], units[e][0]))
        scores: dict[str, float] = {}
        for e in order[: self.episodes]:
            bonus = self.episode_weight * float(episode_scores[e])
            rows = range(starts[e], starts[e] + len(units[e]))
            best = sorted(rows, key=lambda row: -sims[row])[: self.turns]
            for row in best:
                scores[ids[row]] = float(sims[row]) + bonus
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return ranked[: ctx.depth]
