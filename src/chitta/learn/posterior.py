"""The learner's posteriors, as pure functions: what a parameter's evidence says, a sample
drawn from it, and the evidence one credited recall adds.

Thompson sampling (Thompson, Biometrika 1933) over a continuous parameter: each parameter has
a posterior over *where its best value lies*, in unit space ([0, 1], learn/params.py), and
each recall uses a value drawn from it. Seed 001's families: a Beta posterior for a bounded
share, a Gaussian for a multiplier (clamped to its range).

Credit turns a recall's outcome into evidence about where the best value lies, as a natural
evolution strategy does (Wierstra et al., JMLR 2014): a value used in a recall that did
*better* than usual (advantage ``a > 0``, learn/learner.py) is an observation at that value
with weight ``a``; one that did *worse* is an observation at its mirror image about the
current mean, ``2μ - u``, with weight ``|a|``. In expectation the mean moves along the
gradient of the reward, and a parameter that makes no difference gets observations on both
sides of its mean, so it stays where it is.

Evidence is two sums, ``W = Σ w`` and ``S = Σ w·u``. The prior counts as
:data:`PRIOR_WORTH` observations at the preset's value, so the mean is

    μ = (n₀·u₀ + S) / (n₀ + W)

for both families; the spread narrows as evidence comes: the Beta's concentration is
``n₀ + W``, and the Gaussian's standard deviation is ``σ₀ · sqrt(n₀ / (n₀ + W))``, σ₀ its
prior's. A fresh store (``W = 0``) has the preset's values as its means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from chitta.learn.params import ParamSpec

#: How many unit-weight observations the prior is worth.
PRIOR_WORTH = 25.0


@dataclass(frozen=True, slots=True)
class Evidence:
    """One parameter's evidence: the weights' sum and the weighted observations' sum."""

    weight: float = 0.0
    total: float = 0.0

    def __add__(self, other: Evidence) -> Evidence:
        return Evidence(self.weight + other.weight, self.total + other.total)

    def __sub__(self, other: Evidence) -> Evidence:
        return Evidence(self.weight - other.weight, self.total - other.total)

    def scaled(self, factor: float) -> Evidence:
        return Evidence(self.weight * factor, self.total * factor)


@dataclass(frozen=True, slots=True)
class Posterior:
    """Where a parameter's best value lies, in unit space: mean and standard deviation."""

    mean: float
    sd: float


def posterior(spec: ParamSpec, evidence: Evidence) -> Posterior:
    """The posterior of ``spec`` given ``evidence`` (module docstring)."""
    n = PRIOR_WORTH + max(0.0, evidence.weight)  # (a replaced observation may leave -0.0)
    mean = min(1.0, max(0.0, (PRIOR_WORTH * spec.prior_unit + evidence.total) / n))
    if spec.family == "beta":
        sd = math.sqrt(mean * (1 - mean) / (n + 1))
    else:
        sd = spec.prior_sd_unit * math.sqrt(PRIOR_WORTH / n)
    return Posterior(mean, sd)


def draw(spec: ParamSpec, evidence: Evidence, rng: np.random.Generator) -> float:
    """A value (unit space, in [0, 1]) drawn from the posterior of ``spec``."""
    post = posterior(spec, evidence)
    if spec.family == "beta":
        n = PRIOR_WORTH + max(0.0, evidence.weight)
        a, b = max(post.mean * n, 1e-3), max((1 - post.mean) * n, 1e-3)
        return float(rng.beta(a, b))
    return min(1.0, max(0.0, float(rng.normal(post.mean, post.sd))))


def observe(used: float, mean: float, advantage: float) -> Evidence:
    """The evidence a recall that used ``used`` (unit space) adds when it did ``advantage``
    better than usual, the posterior's mean being ``mean``: an observation at ``used``, or at
    its mirror about the mean when the advantage is negative, weighing ``|advantage|``."""
    if advantage == 0:
        return Evidence()
    at = used if advantage > 0 else min(1.0, max(0.0, 2 * mean - used))
    weight = abs(advantage)
    return Evidence(weight, weight * at)
