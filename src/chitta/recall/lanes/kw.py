"""``kw``: BM25 over the FTS5 index with the realm's own statistics (Robertson & Zaragoza 2009,
SQLite's constants; store/sqlite/keywords.py)."""

from __future__ import annotations

import re

from chitta.recall.lanes.base import LaneContext
from chitta.store.terms import STOP_WORDS

_TOKEN = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The distinct lower-case word tokens of ``text``, stop words dropped when others remain."""
    tokens = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(text)))
    content = [t for t in tokens if t not in STOP_WORDS]
    return content or tokens


class KeywordLane:
    name = "kw"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.terms:
            return []
        return ctx.store.keyword_search(ctx.terms, ctx.scope, ctx.depth)
