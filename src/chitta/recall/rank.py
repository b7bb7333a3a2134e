"""After fusion: load the candidates, score them, inhibit near-duplicates, cut at the limit.

The fused candidates are read best first until ``config.pool(limit)`` admissible ones are in
hand (4 × limit by default; just ``limit`` when both stages are off, which is the fused
order cut at the limit). The scoring stage (recall/scoring.py) multiplies each fused score
by its bounded factors; lateral inhibition (recall/inhibition.py) then reorders
near-duplicates. Every candidate ends with an outcome:

- ``admitted`` — returned;
- ``missing`` — deleted between the lane and the load; ``superseded`` — replaced by another;
- ``inhibited`` — within the limit on its score, pushed past it by a stronger near-duplicate;
- ``cut`` — past the limit (or past the pool, not loaded).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from chitta.recall.config import RecallConfig
from chitta.recall.fusion import Fused
from chitta.recall.inhibition import inhibit
from chitta.recall.scoring import score
from chitta.recall.scoring_config import ScoringConfig
from chitta.store.base import Store
from chitta.store.provenance import replication_key
from chitta.store.records import Memory

_NONE: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Ranked:
    """One fused candidate's fate: its memory (if loaded), outcome, final score, factors."""

    fused: Fused
    memory: Memory | None
    outcome: str
    final: float | None  # None: never in the pool (dropped, or cut before loading)
    factors: Mapping[str, float] = field(default_factory=lambda: _NONE)


def rank(
    store: Store,
    fused: Sequence[Fused],
    *,
    limit: int,
    config: RecallConfig,
    scoring: ScoringConfig,
    include_superseded: bool,
    now_ms: int,
    timing: dict[str, float],
    load: Callable[[list[str]], Mapping[str, Memory]] | None = None,
    stale: Callable[[list[str]], Collection[str]] | None = None,
) -> list[Ranked]:
    """Every fused candidate with its outcome: the pool in final order first, then the rest.

    ``load`` reads live memories by id (default: ``store.get_many``); ``stale`` says which
    of the pool's memories may describe code that changed (code/stale.py), for the scoring.
    """
    t = time.perf_counter()
    load = load or store.get_many
    pool, dropped, stop = _load_pool(load, fused, config.pool(limit), include_superseded)
    timing["load"] = _ms_since(t)
    finals = [f.score for f, _ in pool]
    factors: list[dict[str, float]] = [{} for _ in pool]
    if config.scoring and pool:
        t = time.perf_counter()
        _score(store, pool, scoring, now_ms, finals, factors, stale)
        timing["score"] = _ms_since(t)
    order = sorted(range(len(pool)), key=lambda i: (-finals[i], i))
    scored_rank = {i: r for r, i in enumerate(order)}
    if config.inhibition and pool:
        t = time.perf_counter()
        vectors = store.vectors_for([pool[i][1].id for i in order])
        result = inhibit(
            [finals[i] for i in order],
            [vectors.get(pool[i][1].id) for i in order],
            threshold=scoring.inhibition_threshold,
            strength=scoring.inhibition_strength,
        )
        for j, i in enumerate(order):
            finals[i] = result.scores[j]
            factors[i]["inhibition"] = result.multipliers[j]
        order = [order[j] for j in result.order]
        timing["inhibit"] = _ms_since(t)
    ranked = []
    for r, i in enumerate(order):
        f, m = pool[i]
        # Past the limit: "inhibited" if its score alone would have kept it within.
        outcome = "admitted" if r < limit else "inhibited" if scored_rank[i] < limit else "cut"
        ranked.append(Ranked(f, m, outcome, finals[i], MappingProxyType(factors[i])))
    ranked.extend(dropped)
    ranked.extend(Ranked(f, None, "cut", None) for f in fused[stop:])
    return ranked


def _load_pool(
    load: Callable[[list[str]], Mapping[str, Memory]],
    fused: Sequence[Fused],
    want: int,
    include_superseded: bool,
) -> tuple[list[tuple[Fused, Memory]], list[Ranked], int]:
    """The first ``want`` admissible candidates, the dropped ones, and where reading stopped."""
    pool: list[tuple[Fused, Memory]] = []
    dropped: list[Ranked] = []
    stop = 0
    while stop < len(fused) and len(pool) < want:
        # As many as are still wanted: a dropped candidate (rare) costs one more small read,
        # where reading twice the pool up front loaded ~40 rows a recall for nothing.
        chunk = fused[stop : stop + want - len(pool)]
        memories = load([f.id for f in chunk])
        for f in chunk:
            stop += 1
            m = memories.get(f.id)
            if m is None:
                dropped.append(Ranked(f, None, "missing", None))
            elif m.superseded_by is not None and not include_superseded:
                dropped.append(Ranked(f, m, "superseded", None))
            else:
                pool.append((f, m))
                if len(pool) >= want:
                    break
    return pool, dropped, stop


def _score(
    store: Store,
    pool: list[tuple[Fused, Memory]],
    config: ScoringConfig,
    now_ms: int,
    finals: list[float],
    factors: list[dict[str, float]],
    stale: Callable[[list[str]], Collection[str]] | None = None,
) -> None:
    ids = [m.id for _, m in pool]
    marked = stale(ids) if stale is not None else ()
    # The access history feeds only the ACT-R factor; it is not read while that is off.
    history = store.access_history(ids) if config.actr_weight > 0 else {}
    # Other sources (sessions, files, URLs) are looked up only when the (opt-in) replication
    # factor is on.
    others = store.replication_sessions(ids) if config.replication_max > 1 else {}
    for i, (f, m) in enumerate(pool):
        own = replication_key(m.source)
        sessions = others.get(m.id, set()) | ({own} if own else set())
        s = score(f.score, m, history.get(m.id), len(sessions), now_ms, config,
                  stale=m.id in marked)  # fmt: skip
        finals[i] = s.final
        factors[i].update(s.factors)
        factors[i]["product"] = s.product


def _ms_since(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 3)
