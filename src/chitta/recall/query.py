"""Reading a query before the lanes run: which of its words are distinctive in the realm,
and whether it asks what the agent itself said.

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
#: A question that asks after the agent's own words: "you" (or "the assistant", as an agent's
#: own query names itself) with a past speech act ("the sealant you recommended", "which did
#: you suggest?", "what the assistant said about…"), "your answer", or the earlier
#: conversation itself ("our previous chat", "we talked about"). Present-tense requests
#: ("can you suggest…") ask for something new and do not count.
_SAID = (
    "recommended|suggested|mentioned|said|told|provided|gave|given|listed|shared|wrote|written"
    "|made|explained|described|proposed|offered|showed|shown|came up with|answered|replied"
    "|advised|pointed out|put together|created|compiled|drafted|outlined|helped"
)
_SAY = (
    "recommend|suggest|mention|say|tell|provide|give|list|share|write|make|explain|describe"
    "|propose|offer|show|come up with|answer|reply|advise|point out|put together|create"
    "|compile|draft|outline|help"
)
#: The agent as the user addresses it, or as an agent's own query names it.
_AGENT = r"(?:you|the assistant|the agent)"
_ASKS_AGENT = re.compile(
    rf"\b{_AGENT}\s+(?:\w+\s+){{0,2}}?(?:{_SAID})\b"
    rf"|\bdid {_AGENT}\s+(?:\w+\s+)?(?:{_SAY})\b"
    r"|\b(?:your|the assistant's|the agent's) (?:answer|reply|response|suggestion"
    r"|recommendation|advice|list|explanation|idea|tip)s?\b"
    r"|\bour (?:previous|last|earlier|past|other) (?:conversation|chat|discussion|session"
    r"|exchange)s?\b"
    r"|\bwe (?:talked|discussed|chatted|spoke|went over|covered)\b",
    re.IGNORECASE,
)


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


def asks_for_agent_words(text: str) -> bool:
    """Whether ``text`` asks what the agent said earlier: then the agent's recorded replies
    are the evidence sought, and the scoring stage trusts them as the user's words
    (:meth:`ScoringConfig.asked_of_agent <chitta.recall.scoring_config.ScoringConfig>`)."""
    return _ASKS_AGENT.search(text) is not None
