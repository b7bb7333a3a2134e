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
5. chitta's own rule, beside the seed's (``respect_band``, on by default): every chunk came
   from a chitta store (``chitta`` or ``chitta_file``) and each of those stores' recalls was
   in the UNKNOWN band — the store's calibrated confidence says it does not know
   (docs/recall.md). The admission gate already kept only rows sharing a distinctive word with
   the question; this rule declines to build an answer out of them: :data:`STORE_UNKNOWN`.
6. after synthesis, the model answering "NO_ANSWER_AVAILABLE: <reason>" (its reason, or "no
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
#: Rule 5: the only evidence came from chitta stores that say they do not know.
STORE_UNKNOWN = (
    "The memory store does not know this: its recall's confidence is UNKNOWN, and no other "
    "source returned anything."
)
#: Kinds of source whose chunks carry the recall's confidence band (``meta["band"]``).
BANDED_KINDS = frozenset({"chitta", "chitta_file"})
#: The extractive answer abstains with this when no cited sentence matches the question.
EXTRACTIVE_NO_MATCH = "No cited sentence shares a word with the question."

_MODEL_ABSTAINS = re.compile(rf"{NO_ANSWER_MARKER}\s*:?(.*)", re.DOTALL)


def pre_synthesis(
    replies: Sequence[SourceReply], citations: Sequence[Citation], settings: AbstainSettings
) -> str | None:
    """The reason to abstain before any synthesis (rules 1-5), or ``None`` to go on.

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
    if settings.respect_band and _stores_say_unknown(replies):
        return STORE_UNKNOWN
    return None


def _stores_say_unknown(replies: Sequence[SourceReply]) -> bool:
    """Whether every chunk came from a chitta store and all of them were recalled UNKNOWN."""
    chunks = [c for r in replies for c in r.chunks]
    answered = [r for r in replies if r.chunks]
    return all(r.kind in BANDED_KINDS for r in answered) and all(
        c.meta.get("band") == "UNKNOWN" for c in chunks
    )


def model_abstention(text: str) -> str | None:
    """The model's reason when ``text`` says NO_ANSWER_AVAILABLE (rule 6), else ``None``.

    The marker counts anywhere in the text, as in the seed ("NO_ANSWER_AVAILABLE in
    response"): a model that hedges with an answer and the marker has not answered. The reason
    is what follows the colon, trimmed of whitespace and of quotes echoed from the prompt."""
    found = _MODEL_ABSTAINS.search(text)
    if found is None:
        return None
    reason = found.group(1).strip().strip("\"'`").strip()
    return reason or NO_REASON
