"""Bayesian confidence, strength and tiers: the pure arithmetic of a memory's lifecycle.

Confidence (seed 001) is a Beta posterior kept as its moments: ``mu`` (mean), ``sigma_sq``
(variance), ``n`` (observations) and ``tau`` (decay per day, from the memory's kind). The
prior counts as :data:`PRIOR_WEIGHT` pseudo-observations at the initial mean, so
``alpha = mu * (n + PRIOR_WEIGHT)`` and ``beta = (1 - mu) * (n + PRIOR_WEIGHT)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

PRIOR_WEIGHT = 2.0
INITIAL_MU = 0.7
MU_FLOOR = 1e-6
UNIFORM_VARIANCE = 1.0 / 12.0  # variance of Beta(1, 1): knowing nothing
INITIAL_STRENGTH = 0.7
REINFORCE_STEP = 0.1
#: Lower bounds of the tiers, by strength (hot > warm > cool > cold).
TIER_FLOORS: tuple[tuple[str, float], ...] = (("hot", 0.6), ("warm", 0.3), ("cool", 0.1))
TIERS = ("hot", "warm", "cool", "cold")


@dataclass(frozen=True, slots=True)
class Confidence:
    """A Beta posterior over "this memory is right", kept as mean and variance."""

    mu: float
    sigma_sq: float
    n: int
    tau: float

    @classmethod
    def initial(cls, tau: float, mu: float = INITIAL_MU) -> Confidence:
        alpha, beta = mu * PRIOR_WEIGHT, (1 - mu) * PRIOR_WEIGHT
        return cls(mu=mu, sigma_sq=_beta_variance(alpha, beta), n=0, tau=tau)


def _beta_variance(alpha: float, beta: float) -> float:
    total = alpha + beta
    return alpha * beta / (total * total * (total + 1.0))


def observe(conf: Confidence, value: float) -> Confidence:
    """The posterior after one observation ``value`` in [0, 1] (1 confirms, 0 refutes)."""
    value = min(1.0, max(0.0, value))
    total = conf.n + PRIOR_WEIGHT
    alpha = conf.mu * total + value
    beta = (1.0 - conf.mu) * total + (1.0 - value)
    return replace(
        conf, mu=alpha / (alpha + beta), sigma_sq=_beta_variance(alpha, beta), n=conf.n + 1
    )


def decay(conf: Confidence, days: float) -> Confidence:
    """Confidence after ``days`` unreinforced: the mean shrinks by ``exp(-tau * days)`` and
    the variance relaxes toward that of knowing nothing.

    The variance stays within what a Beta with the new mean and at least the prior's weight
    can have, ``mu (1 - mu) / (PRIOR_WEIGHT + 1)``, and the mean above :data:`MU_FLOOR`, so
    the state remains a Beta posterior that later observations can update.
    """
    if days <= 0 or conf.tau <= 0:
        return conf
    keep = math.exp(-conf.tau * days)
    mu = max(MU_FLOOR, conf.mu * keep)
    sigma_sq = conf.sigma_sq + (UNIFORM_VARIANCE - conf.sigma_sq) * (1.0 - keep)
    sigma_sq = min(sigma_sq, mu * (1.0 - mu) / (PRIOR_WEIGHT + 1.0))
    return replace(conf, mu=mu, sigma_sq=sigma_sq)


def reinforce(strength: float, step: float = REINFORCE_STEP) -> float:
    """Strength after one reinforcement (a strengthen or a deduplicated re-remember)."""
    return min(1.0, strength + step)


def weaken_strength(strength: float, step: float = REINFORCE_STEP) -> float:
    return max(0.0, strength - step)


def decay_strength(strength: float, rate: float, days: float) -> float:
    """Strength after ``days``: exponential decay at the kind's per-day ``rate``."""
    if days <= 0 or rate <= 0:
        return strength
    return strength * math.exp(-rate * days)


def tier_for(strength: float) -> str:
    """The demotion tier a strength falls in."""
    for name, floor in TIER_FLOORS:
        if strength >= floor:
            return name
    return "cold"
