"""Lateral inhibition: near-duplicate candidates compete, and the weaker one is pushed down.

Seed 001's post-processing (similarity threshold 0.85, inhibition strength 0.7). Pure
function over the scored pool, a greedy selection in the manner of maximal marginal relevance
(Carbonell & Goldstein, SIGIR 1998): repeatedly take the candidate with the best inhibited
score, where a candidate's inhibited score is

    score × (1 − strength × max(0, (c − threshold) / (1 − threshold)))

and ``c`` is its highest cosine to any candidate already taken. The penalty grows linearly
from nothing at the threshold to ``strength`` for an exact duplicate (a cosine-0.85 neighbour
costs nothing, a copy keeps 30 % of its score), so there is no cliff at the threshold.
Candidates are reordered, never removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Inhibited:
    """The new order (indices into the input), and each input's score and multiplier."""

    order: tuple[int, ...]
    scores: tuple[float, ...]  # by input index: the score after inhibition
    multipliers: tuple[float, ...]  # by input index: 1.0 when not inhibited


def penalty(cosine: float, threshold: float, strength: float) -> float:
    """The multiplier for a candidate whose closest stronger neighbour is at ``cosine``."""
    if cosine <= threshold:
        return 1.0
    return 1.0 - strength * min(1.0, (cosine - threshold) / (1.0 - threshold))


def inhibit(
    scores: Sequence[float],
    vectors: Sequence[np.ndarray | None],
    *,
    threshold: float,
    strength: float,
) -> Inhibited:
    """Reorder candidates (given best first) so near-duplicates of stronger ones sink.

    ``vectors[i]`` is candidate i's embedding, or ``None`` when it has none (never inhibited,
    never inhibits). Ties keep the input order.
    """
    n = len(scores)
    if n == 0:
        return Inhibited((), (), ())
    base = np.asarray(scores, dtype=np.float64)
    sims = cosines(vectors)
    multipliers = np.ones(n)
    # Only candidates with a neighbour above the threshold can inhibit or be inhibited; the
    # greedy selection runs over those alone (usually none, or a few).
    involved = np.flatnonzero((sims > threshold).any(axis=1))
    if involved.size:
        sub = sims[np.ix_(involved, involved)]
        closest = np.full(involved.size, -np.inf)  # highest cosine to one already taken
        taken = np.zeros(involved.size, dtype=bool)
        span = 1.0 - threshold
        for _ in range(involved.size):
            current = 1.0 - strength * np.clip((closest - threshold) / span, 0.0, 1.0)
            effective = np.where(taken, -np.inf, base[involved] * current)
            pick = int(np.argmax(effective))  # first of equal maxima: input order
            taken[pick] = True
            multipliers[involved[pick]] = current[pick]
            closest = np.maximum(closest, sub[pick])
    final = base * multipliers
    order = sorted(range(n), key=lambda i: (-final[i], i))
    return Inhibited(tuple(order), tuple(map(float, final)), tuple(map(float, multipliers)))


def cosines(vectors: Sequence[np.ndarray | None]) -> np.ndarray:
    """Pairwise cosines; a missing vector has cosine 0 to everything, and the diagonal is −1."""
    dim = next((len(v) for v in vectors if v is not None), 1)
    matrix = np.zeros((len(vectors), dim), dtype=np.float32)
    for i, v in enumerate(vectors):
        if v is not None:
            matrix[i] = v
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    # einsum, not ``@``: a pool-sized matrix product goes to multi-threaded BLAS, whose idle
    # threads took 10-15 ms to wake on the busy 2-core machine (0.02 ms once awake), against
    # a steady ~0.5 ms for einsum's single-threaded loop.
    sims = np.einsum("ij,kj->ik", matrix, matrix)
    np.fill_diagonal(sims, -1.0)
    return sims
