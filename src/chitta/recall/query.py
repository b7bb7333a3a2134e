"""Reading a query before the lanes run: which of its words are distinctive in the realm.

A word that most memories of a realm contain — the name of a speaker who starts every turn,
a project's own name — says little about which memory is meant, yet it dominates both lanes:
BM25 still adds its small weight across thousands of rows, and a sentence embedding leans
toward every memory that shares it. Such common words are left out of the keyword terms and
out of the text the dense lane embeds, as long as something distinctive remains. Measured on
LoCoMo (docs/benchmarks.md): the dense lane alone went from recall@10 0.455 to 0.649 on the
five tuning conversations.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from chitta.recall.lanes.kw import STOP_WORDS, query_terms

#: A realm needs this many memories before any word is called common.
MIN_REALM_SIZE = 20
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What each lane is given: keyword terms, the text to embed, and the words left out."""

    text: str
    terms: tuple[str, ...]
    embed_text: str
    common: tuple[str, ...]


def plan_query(
    text: str, df: Callable[[str], int], realm_size: int, fraction: float | None
) -> QueryPlan:
    """Split ``text`` into distinctive and common words (common: in more than ``fraction`` of
    the realm's memories; ``None`` turns the analysis off)."""
    terms = query_terms(text)
    if fraction is None or realm_size < MIN_REALM_SIZE:
        return QueryPlan(text, tuple(terms), text, ())
    limit = fraction * realm_size
    common = {t for t in terms if t not in STOP_WORDS and df(t) > limit}
    kept = [t for t in terms if t not in common]
    if not common or not [t for t in kept if t not in STOP_WORDS]:
        return QueryPlan(text, tuple(terms), text, ())
    # The embedded text keeps the question's own words and order, minus the common words.
    tokens = text.split()
    embed_words = [w for w in tokens if not _is_common(w, common)]
    return QueryPlan(text, tuple(kept), " ".join(embed_words), tuple(sorted(common)))


def _is_common(token: str, common: set[str]) -> bool:
    words = [w.lower() for w in _WORD.findall(token)]
    # "Caroline's" is ["caroline", "s"]: the token goes when its first word is common.
    return bool(words) and words[0] in common
