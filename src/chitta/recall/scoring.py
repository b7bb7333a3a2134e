"""The bounded scoring stage: a fused score times bounded factors (seed 000, seed 001).

Pure functions. Each factor maps one property of a memory to a multiplier inside a fixed
range, and the product of all of them is clamped to ``[bounds_min, bounds_max]`` (0.5-1.5 by
default), so relevance — the fused score — stays the main term::

    final = fused × clamp(kind × actr × strength × confidence × tier × replication
                          × provenance, bounds_min, bounds_max)

The factors and their ranges (docs/recall.md has the full table):

- kind: the kind's prior from ``scoring.json`` (seed 000), within [0.5, 1.5]; a memory
  tagged with a fine-grained kind the seed names (``operational``) takes that prior;
- actr: ``1 + w · tanh((B − B_ref) / scale)`` with B the ACT-R base-level activation;
- strength, confidence: ``1 + w · c(x, 0.7)`` where ``c`` maps [0, 0.7, 1] linearly onto
  [−1, 0, 1], so a new memory (strength and confidence 0.7) is neutral;
- tier: ``1 + w · t`` with t = 0 hot, −1/3 warm, −2/3 cool, −1 cold;
- replication: ``1 + (cap − 1)(1 − 1/n)`` for n distinct source sessions, or 1 when off;
- provenance: the trust in the memory's source (store/provenance.py; within [0.5, 1.2]):
  per source when one is configured, else per source kind — 1 for the user's words and
  what was remembered on purpose, 0.8 for the assistant's own recorded answer (hooks/stop.py,
  so that a wrong answer does not reinforce itself), 0.7 for a tool's output, 0.6 for web
  text (the table is recall/scoring_config.py's ``DEFAULT_TRUST``).

One more multiplier stands outside the clamp: ``stale`` (:data:`STALE_FACTOR`, 0.9) for a
memory linked to a symbol whose code changed since (code/stale.py), else none. Outside, so
that a product already at a bound cannot hide it: of two hits of equal relevance and
factors, the possibly stale one ranks below; bounded, so that it moves a hit a little and
never past a clearly more relevant one (0.9 × 0.5 = 0.45 at the very least).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from chitta.recall.fusion import Fused
from chitta.recall.scoring_config import ScoringConfig
from chitta.store.access import AccessHistory
from chitta.store.confidence import INITIAL_MU, INITIAL_STRENGTH
from chitta.store.provenance import source_kind, source_name
from chitta.store.records import Memory

FACTORS = ("kind", "actr", "strength", "confidence", "tier", "replication", "provenance")
#: Where each tier sits on [−1, 0]: only a demoted memory is pushed down.
TIER_SIGNAL: Mapping[str, float] = MappingProxyType(
    {"hot": 0.0, "warm": -1 / 3, "cool": -2 / 3, "cold": -1.0}
)
#: A possibly stale memory's multiplier, after the clamp (docs/code.md).
STALE_FACTOR = 0.9
#: Ages below this many seconds count as this: t^-d has no limit at 0.
MIN_AGE_S = 1.0


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate after scoring: its final score and each factor's multiplier."""

    final: float
    product: float  # the clamped product of the factors
    factors: Mapping[str, float]


def base_level(ages_s: Sequence[float], count: int, lifetime_s: float, d: float) -> float:
    """ACT-R base-level activation ``B = ln(Σ t_j^-d)`` over presentations ``t_j`` seconds ago.

    Anderson & Schooler (1991) found this power law of practice and recency in the statistics
    of the environment; ACT-R's base-level learning equation uses it (Anderson & Lebiere 1998).
    ``ages_s`` are the most recent presentations known exactly; ``count`` is how many there
    were in all over ``lifetime_s``. The ``count − len(ages_s)`` older ones are approximated as
    spread evenly between the oldest known one and the start of the lifetime (Petrov 2006,
    "Computationally efficient approximation of the base-level learning equation in ACT-R").
    """
    ages = [max(MIN_AGE_S, a) for a in ages_s]
    total = sum(a**-d for a in ages)
    older = count - len(ages)
    if older > 0:
        t_k = max(ages) if ages else 0.0
        t_n = max(lifetime_s, t_k + MIN_AGE_S)
        total += older * (t_n ** (1 - d) - t_k ** (1 - d)) / ((1 - d) * (t_n - t_k))
    return math.log(total) if total > 0 else -math.inf  # never presented


def actr_factor(activation: float, config: ScoringConfig) -> float:
    """``1 + w · tanh((B − B_ref) / scale)``: within ``1 ± actr_weight``.

    ``B_ref`` is the activation of one presentation ``actr_reference_s`` ago (a day by
    default): a memory used about that recently is neutral.
    """
    if config.actr_weight == 0:
        return 1.0
    reference = -config.actr_decay * math.log(config.actr_reference_s)
    return 1.0 + config.actr_weight * math.tanh((activation - reference) / config.actr_scale)


def centred(x: float, mid: float) -> float:
    """``x`` in [0, 1] mapped onto [−1, 1], piecewise linearly, with ``mid`` at 0."""
    x = min(1.0, max(0.0, x))
    return (x - mid) / (1.0 - mid) if x >= mid else (x - mid) / mid


def replication_factor(sessions: int, cap: float) -> float:
    """``1 + (cap − 1)(1 − 1/n)`` for ``n`` distinct sessions: 1 for one, toward ``cap``."""
    if cap <= 1.0 or sessions <= 1:
        return 1.0
    return 1.0 + (cap - 1.0) * (1.0 - 1.0 / sessions)


def factors(
    memory: Memory,
    history: AccessHistory | None,
    sessions: int,
    now_ms: int,
    config: ScoringConfig,
) -> dict[str, float]:
    """Each factor's multiplier for ``memory`` at ``now_ms``.

    The memory's creation counts as its first presentation, the recorded accesses as the rest.
    """
    activation = 0.0
    if config.actr_weight > 0:  # off by default: skip the sum
        lifetime = max(MIN_AGE_S, (now_ms - memory.created_at) / 1000)
        times = history.times if history else ()
        count = history.count if history else 0
        ages = [(now_ms - t) / 1000 for t in times]
        if len(times) == count:  # every access known: the creation is exact too
            ages.append(lifetime)
        activation = base_level(ages, count + 1, lifetime, config.actr_decay)
    return {
        "kind": config.prior(memory.kind, memory.tags),
        "actr": actr_factor(activation, config),
        "strength": 1.0 + config.strength_weight * centred(memory.strength, INITIAL_STRENGTH),
        "confidence": 1.0 + config.confidence_weight * centred(memory.confidence.mu, INITIAL_MU),
        "tier": 1.0 + config.tier_weight * TIER_SIGNAL.get(memory.tier, -1.0),
        "replication": replication_factor(sessions, config.replication_max),
        "provenance": config.trusted(source_kind(memory.source), source_name(memory.source)),
    }


def bounded_product(values: Mapping[str, float], config: ScoringConfig) -> float:
    """The product of the multipliers, clamped to ``[bounds_min, bounds_max]``."""
    product = math.prod(values.values())
    return min(config.bounds_max, max(config.bounds_min, product))


def score(
    fused: float,
    memory: Memory,
    history: AccessHistory | None,
    sessions: int,
    now_ms: int,
    config: ScoringConfig,
    stale: bool = False,
) -> Scored:
    """The final score of one candidate: ``fused ×`` the bounded product of its factors
    (``× STALE_FACTOR`` when it is ``stale``: its factors then name it)."""
    values = factors(memory, history, sessions, now_ms, config)
    product = bounded_product(values, config)
    if not stale:
        return Scored(final=fused * product, product=product, factors=values)
    values["stale"] = STALE_FACTOR
    return Scored(final=fused * product * STALE_FACTOR, product=product, factors=values)


def by_own_factors(
    fused: Sequence[Fused], memories: Mapping[str, Memory], now_ms: int, config: ScoringConfig
) -> list[Fused]:
    """``fused`` reordered by score × the bounded product of each memory's own factors (its
    kind, strength, confidence, tier and source; no access history, no session count): the
    order the scoring stage would give them before anything recall has seen of them.

    The derived lanes (``ctx``) start from the best few fused candidates, and ``ctx`` gives
    each seed a share of its own by rank; seeded by the plain fused order, an assistant's
    reply that echoes the user's words — found first by the keyword and dense lanes — was
    lifted above the user's turn that held the answer before the provenance factor could
    weigh it (docs/benchmarks.md, "Seeds as the scoring stage weighs them"). A memory not
    loaded keeps its fused score; equal scores keep their order."""
    weighed = [f.score if (m := memories.get(f.id)) is None
               else score(f.score, m, None, 0, now_ms, config).final for f in fused]  # fmt: skip
    order = sorted(range(len(fused)), key=lambda i: (-weighed[i], i))
    return [fused[i] for i in order]
