"""The merge: deduplicate the sources' chunks by content hash and fuse them by weighted
reciprocal-rank fusion (Cormack, Clarke & Büttcher 2009), as seed 003 describes.

A chunk's raw score is Σ over the sources that returned it of ``priority_i / (k + rank_i)``,
so content found by two sources is one citation that collects both shares. Raw scores are
divided by the best one (seed 003: raw RRF scores are tiny, about 0.016, and would fail any
absolute threshold), chunks under ``min_score`` are dropped, the rest sorted best first and
numbered 1..n after sorting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chitta.cited.base import Chunk, Citation, SourceReply, SourceStats
from chitta.cited.settings import MergeSettings

#: Characters of the md5 hex digest kept as the content hash (seed 003).
HASH_CHARS = 12
#: The priority of a source the ``priorities`` mapping does not name.
DEFAULT_WEIGHT = 1.0


def content_hash(text: str) -> str:
    """The md5 of ``text`` with runs of whitespace folded to one space and the ends trimmed,
    first 12 hex characters.

    Whitespace is folded because the same passage often comes back re-wrapped or with a
    trailing newline from a file; case is kept, since it can carry meaning (names, code)."""
    normal = " ".join(text.split())
    return hashlib.md5(normal.encode("utf-8"), usedforsecurity=False).hexdigest()[:HASH_CHARS]


@dataclass(slots=True)
class _Fused:
    """One distinct content while merging: its best instance and its sources' shares."""

    hash: str
    chunk: Chunk
    source: str
    kind: str
    share: float  # the displayed instance's own RRF contribution
    order: int  # position of the displayed instance in the input, for stable ties
    shares: dict[str, float]  # source name -> that source's contribution (its best rank)


def merge(
    replies: Sequence[SourceReply], priorities: Mapping[str, float], settings: MergeSettings
) -> list[Citation]:
    """The citations for ``replies``: deduplicated, fused, normalised, filtered, numbered.

    Dedupe: chunks whose content hashes agree are one citation. Its score sums one share per
    source (a source that returned the content twice counts once, at its better rank); its
    text, source, rank and source score are those of the instance with the highest own share
    ``priority / (k + rank)`` — "the higher-scored chunk" of seed 003 — ties going to the one
    seen first (replies in the order given, chunks in rank order). Blank chunks are skipped.
    Sources' own scores are never compared: BM25 and cosine are not on one scale.
    """
    fused: dict[str, _Fused] = {}
    order = 0
    for reply in replies:
        weight = priorities.get(reply.name, DEFAULT_WEIGHT)
        for chunk in sorted(reply.chunks, key=lambda c: c.rank):
            if not chunk.text.strip():
                continue
            key = content_hash(chunk.text)
            share = weight / (settings.k + chunk.rank)
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = _Fused(key, chunk, reply.name, reply.kind, share, order, {})
            elif share > entry.share:
                entry.chunk, entry.source, entry.kind = chunk, reply.name, reply.kind
                entry.share, entry.order = share, order
            # Within one source only its best rank counts (chunks come in rank order); across
            # sources the shares add up.
            entry.shares.setdefault(reply.name, share)
            order += 1
    return _number(list(fused.values()), settings.min_score)


def _number(entries: list[_Fused], min_score: float) -> list[Citation]:
    """Normalise by the best raw score, drop those under ``min_score``, sort, number."""
    raws = {e.hash: sum(e.shares.values()) for e in entries}
    top = max(raws.values(), default=0.0)
    # With every priority 0 nothing has weight; every score is then 0 rather than 0/0.
    scores = {h: (raw / top if top > 0 else 0.0) for h, raw in raws.items()}
    kept = [e for e in entries if scores[e.hash] >= min_score]
    # Ties (equal fused scores) go to the better own rank, then to input order: deterministic.
    kept.sort(key=lambda e: (-raws[e.hash], e.chunk.rank, e.order))
    return [
        Citation(
            citation_id=number,
            source=e.source,
            source_kind=e.kind,
            content=e.chunk.text,
            rrf_score=scores[e.hash],
            raw_rrf=raws[e.hash],
            source_score=e.chunk.score,
            rank=e.chunk.rank,
            ref=e.chunk.ref,
            content_hash=e.hash,
        )
        for number, e in enumerate(kept, start=1)
    ]


def source_stats(replies: Sequence[SourceReply]) -> dict[str, SourceStats]:
    """Per source, in the order given: how many chunks it returned and the maximum and mean of
    its own scores. Sources that failed or found nothing are listed with count 0."""
    stats: dict[str, SourceStats] = {}
    for reply in replies:
        scores = [c.score for c in reply.chunks]
        if scores:
            stats[reply.name] = SourceStats(len(scores), max(scores), sum(scores) / len(scores))
        else:
            stats[reply.name] = SourceStats(0, 0.0, 0.0)
    return stats
