"""BM25 (Robertson & Zaragoza 2009) with SQLite FTS5's constants and idf.

The keyword search (store/sqlite/keywords.py) scores with it over one realm's statistics; the gate
(recall/confidence/gate.py) puts those scores on a 0-100 scale with :func:`idf`. Pure Python:
the hooks import the gate.
"""

from __future__ import annotations

import math
from typing import Any

#: FTS5's ``bm25()`` defaults: term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a term that more than half the rows hold: it still counts a
#: little, so such a row still ranks above one without the term.
MIN_IDF = 1e-6


def idf(df: int, n: int) -> float:
    """The inverse document frequency of a term that ``df`` of ``n`` documents hold, as FTS5
    computes it: ln((n - df + 0.5) / (df + 0.5)), at least :data:`MIN_IDF`."""
    if n <= 0:
        return MIN_IDF
    return max(math.log((n - df + 0.5) / (df + 0.5)), MIN_IDF)


def saturation(tf: Any, length: Any, avgdl: float) -> Any:
    """A term's frequency part, tf (k1 + 1) / (tf + k1 (1 - b + b length / avgdl)), in
    FTS5's order of operations; tends to k1 + 1 as tf grows. ``tf`` and ``length`` may be
    numpy arrays. ``avgdl`` 0 (no document has a word) reads as 1."""
    norm = 1 - B + B * length / (avgdl or 1.0)
    return tf * (K1 + 1) / (tf + K1 * norm)
