"""Comparing two runs question by question: wins, losses, ties and a paired significance test.

The test is a paired randomisation (sign-flip) test on the per-question differences
(Smucker, Allan & Carterette, CIKM 2007): under the null hypothesis each difference is as
likely to have had the other sign. Two-sided, with a fixed seed so a comparison repeats.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chitta.errors import BadArgument


@dataclass(frozen=True, slots=True)
class Comparison:
    system_a: str
    system_b: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    wins: int  # questions where B scores higher than A
    losses: int
    ties: int
    p_value: float


def sign_flip_p(diffs: Sequence[float], *, rounds: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference under random sign flips."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.size == 0 or not np.any(d):
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(rounds, d.size))
    means = np.abs((signs * d).mean(axis=1))
    # +1 on both sides: the observed labelling is one of the possible ones (never p = 0).
    return float((np.sum(means >= observed - 1e-12) + 1) / (rounds + 1))


def load_questions(path: Path) -> dict[tuple[str, str, int], dict]:
    """Per-question rows of a run, keyed by (system, conversation, question index)."""
    rows: dict[tuple[str, str, int], dict] = {}
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    rows[(row["system"], row["conversation"], row["question"])] = row
    except FileNotFoundError:
        raise BadArgument(f"no per-question file at {path}") from None
    except (json.JSONDecodeError, KeyError) as exc:
        raise BadArgument(f"{path} is not a per-question results file: {exc}") from None
    return rows


def compare(
    rows_a: dict[tuple[str, str, int], dict],
    rows_b: dict[tuple[str, str, int], dict],
    system_a: str,
    system_b: str,
    metric: str = "recall@10",
    categories: set[int] | None = None,
) -> Comparison:
    """B against A on the questions both answered (optionally only some categories)."""
    pairs = []
    for (system, conv, q), row in rows_a.items():
        if system != system_a or (categories and row["category"] not in categories):
            continue
        other = rows_b.get((system_b, conv, q))
        if other is not None:
            pairs.append((row["metrics"][metric], other["metrics"][metric]))
    if not pairs:
        raise BadArgument(f"no questions in common between {system_a} and {system_b}")
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    diff = b - a
    return Comparison(
        system_a=system_a,
        system_b=system_b,
        metric=metric,
        n=len(pairs),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        wins=int((diff > 1e-12).sum()),
        losses=int((diff < -1e-12).sum()),
        ties=int((np.abs(diff) <= 1e-12).sum()),
        p_value=sign_flip_p(diff.tolist()),
    )
