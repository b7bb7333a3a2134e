"""``kw``: BM25 over the FTS5 index (Robertson & Zaragoza 2009; SQLite's ``bm25()``)."""

from __future__ import annotations

import re

from chitta.recall.lanes.base import LaneContext

_TOKEN = re.compile(r"\w+", re.UNICODE)

#: Words too common to say what a query is about. Dropped from keyword queries unless the
#: query has nothing else, so "why not our own log?" searches for "log". "s" and "t" are what
#: is left of "Alice's" and "don't" after tokenising.
_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def query_terms(text: str) -> list[str]:
    """The distinct lower-case word tokens of ``text``, stop words dropped when others remain."""
    tokens = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(text)))
    content = [t for t in tokens if t not in STOP_WORDS]
    return content or tokens


def match_expression(terms: list[str]) -> str:
    """An FTS5 query matching any of ``terms``, each quoted so no term is read as syntax."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class KeywordLane:
    name = "kw"
    derived = False

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        if not ctx.terms:
            return []
        return ctx.store.keyword_search(match_expression(list(ctx.terms)), ctx.scope, ctx.depth)
