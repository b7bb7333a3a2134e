"""When cited recall declines to answer: seed 003's abstention rules, each with its reason.

Checked in the seed's order; the first rule that holds gives the reason:

1. no source returned anything: "No results from any memory store."
2. fewer sources returned chunks than ``min_sources`` — capped at the number of sources
   configured, so a setup with one source can still answer: "Insufficient sources (N < M). ..."
3. the best normalised score is under ``min_top_score``: "Low relevance scores (top RRF score:
   X < 0.3)." After max-normalisation the best citation scores exactly 1.0 whenever the merge
   keeps anything, so this rule fires only when the merge keeps nothing although chunks were
   found (every chunk's weight is 0, or ``merge.min_score`` is above 1) or when
   ``min_top_score`` is set above 1. It is kept exactly, as the seed's guard.
4. fewer than ``min_chunks`` pieces of evidence: "Insufficient evidence (N < 2 chunks)." The
   evidence counted is the citations the merge kept — distinct contents above the score floor,
   what an answer could cite — not the raw chunk count, where one passage returned by two
   sources would count twice.
5. after synthesis, the model answering "NO_ANSWER_AVAILABLE: <reason>" (its reason, or "no
   reason given"); the extractive answer's analogue is :data:`EXTRACTIVE_NO_MATCH`.

Abstaining still returns the citations found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chitta.cited.base import Citation, SourceReply
from chitta.cited.settings import AbstainSettings

NO_RESULTS = "No results from any memory store."
#: The marker the prompt asks a model to answer with when the context does not suffice.
NO_ANSWER_MARKER = "NO_ANSWER_AVAILABLE"
NO_REASON = "no reason given"
#: The extractive answer abstains with this when no cited sentence matches the question.
EXTRACTIVE_NO_MATCH = "No cited sentence shares a word with the question."

_MODEL_ABSTAINS = re.compile(rf"{NO_ANSWER_MARKER}\s*:?(.*)", re.DOTALL)


def pre_synthesis(
    replies: Sequence[SourceReply], citations: Sequence[Citation], settings: AbstainSettings
) -> str | None:
    """The reason to abstain before any synthesis (rules 1-4), or ``None`` to go on.

    ``replies`` holds one reply per configured source, failed ones included."""
    total = sum(len(r.chunks) for r in replies)
    if total == 0:
        return NO_RESULTS
    with_results = sum(1 for r in replies if r.chunks)
    needed = min(settings.min_sources, len(replies))
    if with_results < needed:
        only = "Only one source" if with_results == 1 else f"Only {with_results} sources"
        return f"Insufficient sources ({with_results} < {needed}). {only} returned results."
    top = max((c.rrf_score for c in citations), default=0.0)
    if top < settings.min_top_score:
        return f"Low relevance scores (top RRF score: {top:.2f} < {settings.min_top_score:g})."
    if len(citations) < settings.min_chunks:
        return f"Insufficient evidence ({len(citations)} < {settings.min_chunks} chunks)."
    return None


def model_abstention(text: str) -> str | None:
    """The model's reason when ``text`` says NO_ANSWER_AVAILABLE (rule 5), else ``None``.

    The marker counts anywhere in the text, as in the seed ("NO_ANSWER_AVAILABLE in
    response"): a model that hedges with an answer and the marker has not answered. The reason
    is what follows the colon, trimmed of whitespace and of quotes echoed from the prompt."""
    found = _MODEL_ABSTAINS.search(text)
    if found is None:
        return None
    reason = found.group(1).strip().strip("\"'`").strip()
    return reason or NO_REASON
