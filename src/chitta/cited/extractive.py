"""The answer without a model: the sentences of the top citations that best match the question,
each followed by its citation id.

Scoring is word overlap weighted by inverse document frequency, with the top citations as the
documents: a sentence scores Σ ln(1 + n / df(w)) over the question's content words ``w`` it
contains (``n`` citations considered, ``df`` how many of them contain ``w``), so a word that
only one citation has counts for more than one every citation repeats. Words are lower-cased
\\w+ tokens, chitta's stop words dropped, a plural "s" folded. Ties go to the better citation,
then to the earlier sentence. If no sentence contains a content word of the question, the
extractive answer abstains (:data:`chitta.cited.abstain.EXTRACTIVE_NO_MATCH`) — the analogue
of a model's NO_ANSWER_AVAILABLE — rather than quote unrelated text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from chitta.cited.base import Citation
from chitta.store.terms import STOP_WORDS, tokens

#: Citations whose sentences are considered, best first.
TOP_CITATIONS = 5
#: Sentences quoted from any one citation, so one long chunk cannot fill the answer.
PER_CITATION = 2
#: Characters of one quoted sentence; a longer one (a JSON blob, a run-on line) is cut.
SENTENCE_CHARS = 400

_WORD = re.compile(r"\w+", re.UNICODE)
# A sentence ends at . ! or ? followed by whitespace; lines are split first, so Markdown
# bullets and headings are sentences of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LINE_MARK = re.compile(r"^\s*(?:[-*+•>]|#{1,6}|\d+[.)])\s+")


@dataclass(frozen=True, slots=True)
class _Candidate:
    score: float
    citation: int  # position among the top citations
    position: int  # position of the sentence in its citation
    text: str
    citation_id: int


def content_words(text: str) -> set[str]:
    """The distinct words of ``text`` that say what it is about: lower-cased, stop words
    dropped, a plural "s" folded ("databases" and "database" match)."""
    out = set()
    for token in tokens(text):
        if token in STOP_WORDS:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        out.add(token)
    return out


def sentences(text: str) -> list[str]:
    """``text`` split into sentences: by line, then after . ! ? ; list and heading marks
    removed, fragments without a word dropped."""
    out = []
    for line in text.splitlines():
        line = _LINE_MARK.sub("", line).strip()
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if _WORD.search(part):
                out.append(part)
    return out


def extractive_answer(query: str, citations: Sequence[Citation], count: int) -> str | None:
    """Up to ``count`` best-matching sentences of the top citations, each followed by its
    "[N]", in citation order; ``None`` when no sentence shares a content word with ``query``."""
    wanted = content_words(query)
    top = list(citations[:TOP_CITATIONS])
    split = [sentences(c.content) for c in top]
    words = [[content_words(s) for s in parts] for parts in split]
    df: dict[str, int] = {}
    for per_citation in words:
        for word in set().union(*per_citation) & wanted:
            df[word] = df.get(word, 0) + 1
    idf = {word: math.log(1 + len(top) / n) for word, n in df.items()}
    candidates = [
        _Candidate(sum(idf[w] for w in found & wanted), i, j, split[i][j], top[i].citation_id)
        for i, per_citation in enumerate(words)
        for j, found in enumerate(per_citation)
        if found & wanted
    ]
    candidates.sort(key=lambda c: (-c.score, c.citation, c.position))
    chosen: list[_Candidate] = []
    seen: set[str] = set()
    per: dict[int, int] = {}
    for candidate in candidates:
        if len(chosen) >= max(1, count):
            break
        key = " ".join(candidate.text.lower().split())
        if key in seen or per.get(candidate.citation, 0) >= PER_CITATION:
            continue
        seen.add(key)
        per[candidate.citation] = per.get(candidate.citation, 0) + 1
        chosen.append(candidate)
    if not chosen:
        return None
    # Read in the citations' order (best citation first), each sentence where it stood.
    chosen.sort(key=lambda c: (c.citation, c.position))
    return " ".join(f"{_clip(c.text)} [{c.citation_id}]" for c in chosen)


def _clip(sentence: str) -> str:
    """``sentence`` on one line, cut to :data:`SENTENCE_CHARS` with an ellipsis."""
    flat = " ".join(sentence.split())
    if len(flat) <= SENTENCE_CHARS:
        return flat
    return flat[: SENTENCE_CHARS - 1].rstrip() + "…"
