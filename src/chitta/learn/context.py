"""A query's context for the learner: seed 001's QueryContext features, and the bucket they
put the query in.

The features (seed 001, "Self-Tuning"): the query's length, its term count, whether it has
technical terms, whether it starts with a domain prefix, and its terms' average frequency in
the realm. The learner keeps evidence per bucket of them, so that what suits a short
question about a name need not be what suits a long one about code (learn/learner.py says
how the buckets share what they learn). Four features, 3 × 2 × 2 × 2 = 24 buckets:

- ``short`` (at most 2 keyword terms), ``mid`` (3-6) or ``long`` (7 or more); the query's
  length in characters is reported but not bucketed (it follows the term count);
- ``code`` when the query names something as code does (code/names.py: ``parse_tags``,
  ``Cart.total``, a backticked span), else ``prose``;
- ``prefixed`` when it starts with a domain prefix (``infra: ...``, ``[billing] ...``);
- ``common`` when its terms are, on average, in at least :data:`COMMON_SHARE` of the realm's
  memories, else ``rare``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chitta.code.names import code_names

#: A term in this share of the realm's memories, on average, makes a query ``common``.
COMMON_SHARE = 0.01
_PREFIX = re.compile(r"\s*(?:\[[\w .-]{1,32}\]|[A-Za-z][\w.-]{0,31}:)\s")


@dataclass(frozen=True, slots=True)
class QueryContext:
    """Seed 001's query-context features of one query."""

    length: int
    terms: int
    technical: bool
    prefixed: bool
    term_share: float  # the terms' average share of the realm's memories

    @property
    def bucket(self) -> str:
        size = "short" if self.terms <= 2 else "mid" if self.terms <= 6 else "long"
        return ".".join((
            size,
            "code" if self.technical else "prose",
            "prefixed" if self.prefixed else "plain",
            "common" if self.term_share >= COMMON_SHARE else "rare",
        ))  # fmt: skip


def query_context(
    query: str, terms: Sequence[str], df: Callable[[str], int], size: int
) -> QueryContext:
    """The features of ``query`` whose keyword terms are ``terms``, in a realm of ``size``
    memories where ``df`` counts the memories holding a term."""
    share = sum(df(t) for t in terms) / (len(terms) * size) if terms and size else 0.0
    return QueryContext(
        length=len(query),
        terms=len(terms),
        technical=bool(code_names(query)),
        prefixed=_PREFIX.match(query) is not None,
        term_share=share,
    )
