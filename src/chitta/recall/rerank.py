"""The optional rerank stage (seed 000; DESIGN.md §4, step 5): a cross-encoder reorders hits.

Seed 000: "When a cross-encoder is available, the recall gateway fetches four times the
requested limit and scores query/document pairs … Ranking uses sigmoid(logit) multiplied by
the kind envelope 0.7 + 0.3 × kind_prior, preserving the distinction between curated
corrections and operational fragments. Missing, insufficient or malformed candidate/score
output falls back to the daemon's ordering." and "If no reranker can be loaded the pipeline
runs without it — this stage is optional." Every result of a recall with a reranker
configured carries a :class:`~chitta.recall.result.RerankInfo` saying whether it was applied,
and if not, why.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from chitta.embed.cross_encoder import CrossEncoder, LazyCrossEncoder, check_logits
from chitta.errors import RerankError, RerankOutputError
from chitta.recall.config import MAX_LIMIT
from chitta.recall.result import Hit, RecallResult, RerankInfo
from chitta.recall.scoring_config import ScoringConfig

log = logging.getLogger(__name__)

#: Candidates fetched per requested hit (seed 000: four times the limit).
FETCH_FACTOR = 4
#: The kind envelope of seed 000: ENVELOPE_BASE + ENVELOPE_PRIOR × kind prior.
ENVELOPE_BASE = 0.7
ENVELOPE_PRIOR = 0.3
#: The outcome of a candidate the reranker pushed past the limit (``RecallResult.dropped``).
RERANKED_OUT = "reranked"
#: Longest fallback reason kept from an exception's message.
MAX_REASON_CHARS = 400


def fetch_limit(limit: int) -> int:
    """How many hits to ask the pipeline for when reranking down to ``limit`` (a bad limit
    is passed through, so the pipeline refuses it in the caller's terms)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return limit
    return min(FETCH_FACTOR * limit, MAX_LIMIT)


def sigmoid(logits: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow for large negative logits."""
    x = np.asarray(logits, dtype=np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def envelope(prior: float) -> float:
    """Seed 000's kind envelope, 0.7 + 0.3 × prior: 1.09 for a correction, 0.94 for an
    operational fragment, 1 for a kind without a prior."""
    return ENVELOPE_BASE + ENVELOPE_PRIOR * prior


def rerank_scores(logits: Sequence[float] | np.ndarray, priors: Sequence[float]) -> np.ndarray:
    """sigmoid(logit) × (0.7 + 0.3 × prior), per candidate (seed 000)."""
    return sigmoid(np.asarray(logits)) * np.array([envelope(p) for p in priors], np.float64)


def rerank_order(scores: Sequence[float] | np.ndarray) -> list[int]:
    """Candidate indices by score, best first; equal scores keep their fused order."""
    values = [float(s) for s in scores]
    return sorted(range(len(values)), key=lambda i: -values[i])  # sorted() is stable


def rerank_result(
    result: RecallResult, reranker: LazyCrossEncoder, *, limit: int, scoring: ScoringConfig
) -> RecallResult:
    """``result`` (fetched at :func:`fetch_limit`) reranked by the cross-encoder and cut to
    ``limit``; on any failure, its fused order cut to ``limit``, saying why in ``rerank``."""
    start = time.perf_counter()
    hits = result.hits
    if not hits:
        return _finish(result, (), RerankInfo(False, reranker.name, "no candidates"), start)
    try:
        scorer = reranker.get()
    except RerankError as exc:  # remembered by the LazyCrossEncoder; logged once there
        return _fall_back(result, limit, reranker.name, f"load failed: {_text(exc)}", 0, start)
    logits, reason = _logits(scorer, result.query, [h.memory.content for h in hits])
    if logits is None:
        # Shapes, counts and exception text only: never the query or a memory (house style).
        log.warning("rerank fell back to the fused order: %s", reason)
        return _fall_back(result, limit, scorer.name, str(reason), len(hits), start)
    priors = [scoring.prior(h.memory.kind, h.memory.tags) for h in hits]
    scores = rerank_scores(logits, priors)
    reranked = tuple(_with_score(hits[i], float(scores[i])) for i in rerank_order(scores)[:limit])
    info = RerankInfo(True, scorer.name, None, len(hits))
    return _finish(result, reranked, info, start)


def _logits(
    scorer: CrossEncoder, query: str, documents: list[str]
) -> tuple[np.ndarray | None, str | None]:
    """``(logits, None)``, or ``(None, why)`` when the scorer fails or its output is malformed."""
    try:
        return check_logits(scorer.score(query, documents), len(documents)), None
    except RerankOutputError as exc:
        return None, f"malformed output: {_text(exc)}"
    except Exception as exc:  # any scorer failure keeps the fused order (seed 000)
        return None, f"scorer failed: {type(exc).__name__}: {_text(exc)}"


def _text(exc: Exception, limit: int = MAX_REASON_CHARS) -> str:
    """An exception's message on one line, cut to ``limit`` characters (onnxruntime's run
    up to a kilobyte, with the C++ source location)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_score(hit: Hit, score: float) -> Hit:
    return replace(hit, factors=MappingProxyType({**hit.factors, "rerank": score}))


def _fall_back(
    result: RecallResult, limit: int, model: str, reason: str, candidates: int, start: float
) -> RecallResult:
    info = RerankInfo(False, model, reason, candidates)
    return _finish(result, result.hits[:limit], info, start)


def _finish(
    result: RecallResult, hits: tuple[Hit, ...], info: RerankInfo, start: float
) -> RecallResult:
    """``result`` with ``hits``; the fetched hits left out are counted as dropped."""
    kept = {h.memory.id for h in hits}
    cause = RERANKED_OUT if info.applied else "cut"
    decisions = tuple(
        replace(d, outcome=cause) if d.outcome == "admitted" and d.id not in kept else d
        for d in result.decisions
    )
    ms = round((time.perf_counter() - start) * 1000, 3)
    timing = {**result.timing_ms, "rerank": ms}
    timing["total"] = round(timing.get("total", 0.0) + ms, 3)
    return replace(
        result, hits=hits, decisions=decisions, timing_ms=timing, rerank=replace(info, ms=ms)
    )
