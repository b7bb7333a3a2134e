"""What a recall returns: its hits, what became of every candidate, and how it was made.

Records only, apart from the stages' own records they hold (the plan, the confidence, the
turn, the time cue's run): the pipeline (recall/pipeline.py) builds them, and the stages after
it (recall/rerank.py, recall/timecue/, recall/trace.py) and the wire read and replace them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from chitta.code.stale import StaleLink
from chitta.recall.confidence.calibration import Confidence
from chitta.recall.confidence.gate import Turn
from chitta.recall.fusion import LaneHit
from chitta.recall.lanes.corr import CorrectionMatch
from chitta.recall.query import QueryPlan
from chitta.recall.timecue.arm import CueRun
from chitta.store.records import Memory, Scope

if TYPE_CHECKING:
    from chitta.learn.learner import Tuning

_NO_FACTORS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory, each lane that found it, its fused score (``score``: the sum of
    the lanes' contributions) and its final score after the scoring stage and inhibition."""

    memory: Memory
    score: float
    lanes: dict[str, LaneHit]
    final: float | None = None  # None: not ranked by the pipeline
    factors: Mapping[str, float] = field(default_factory=lambda: _NO_FACTORS)

    @property
    def reason(self) -> str:
        """Why it was admitted: the lanes that brought it, e.g. ``sem+kw``."""
        return "+".join(self.lanes)


@dataclass(frozen=True, slots=True)
class Decision:
    """What became of one fused candidate: ``admitted``, or the cause it was dropped."""

    id: str
    score: float  # fused
    lanes: Mapping[str, LaneHit]
    outcome: str  # admitted | superseded | missing | inhibited | cut (recall/rank.py)
    final: float | None = None  # after scoring and inhibition; None when not in the pool
    factors: Mapping[str, float] = field(default_factory=lambda: _NO_FACTORS)


@dataclass(frozen=True, slots=True)
class RecallResult:
    """A recall's ranked hits and how it was made (no stored text beyond the hits)."""

    query: str
    strategy: str
    scope: Scope
    hits: tuple[Hit, ...]
    lanes_run: tuple[str, ...]
    candidates: int
    timing_ms: dict[str, float]
    decisions: tuple[Decision, ...] = ()
    plan: QueryPlan | None = None  # which query words the lanes were given
    #: Corrections the query names (the keyed ``corr`` lookup): beside the hits, never cut.
    corrections: tuple[CorrectionMatch, ...] = ()
    #: Does the store know anything about this? (recall/confidence/calibration.py; None: no query
    #: vector, as under the keyword strategy.)
    confidence: Confidence | None = None
    #: The query as the admission gate reads it (recall/confidence/gate.py).
    turn: Turn | None = None
    #: The most BM25 the keyword terms can reach, to normalise ``kw`` raw scores (gate.py).
    kw_ceiling: float | None = None
    #: Per hit, the turn's distinctive words it holds, matched as the keyword lane matches.
    shared: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    #: The trace v1 record (recall/trace.py), when the caller asked for one.
    trace: Mapping[str, Any] | None = None
    #: What the cross-encoder stage did (recall/rerank.py); None: no reranker configured.
    rerank: RerankInfo | None = None
    #: What the time cue did (recall/timecue/arm.py, apply.py); None: no cue was given.
    cue: CueRun | None = None
    #: Lanes whose work a bound cut (a hub's edges, the visit budget), with what cut it.
    bounded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Per older hit, the id of the newer memory on the same subject (recall/updates.py).
    newer: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Per possibly stale hit, its linked symbols whose code changed since (code/stale.py).
    stale: Mapping[str, tuple[StaleLink, ...]] = field(default_factory=lambda: MappingProxyType({}))
    #: Memories of the realm stored moments ago whose vectors have not arrived yet
    #: (subconscious/embedding.py): found by their words only, for now.
    unembedded: int = 0
    #: What the resonance learner set for this recall (learn/learner.py); None: nothing.
    tuning: Tuning | None = None

    @property
    def dropped(self) -> dict[str, int]:
        """Candidates not returned, counted by cause."""
        counts: dict[str, int] = {}
        for d in self.decisions:
            if d.outcome not in ("admitted", "seated"):  # seated: returned by a cue seat
                counts[d.outcome] = counts.get(d.outcome, 0) + 1
        return counts


@dataclass(frozen=True, slots=True)
class RerankInfo:
    """What the rerank stage did to one recall.

    ``applied`` is False when the hits are in the fused order, and then ``fallback`` says why:
    ``load failed: …``, ``scorer failed: …``, ``malformed output: …`` or ``no candidates``.
    """

    applied: bool
    model: str | None  # the cross-encoder's name
    fallback: str | None = None
    candidates: int = 0  # query/document pairs handed to the scorer
    ms: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "model": self.model,
            "fallback": self.fallback,
            "candidates": self.candidates,
            "ms": round(self.ms, 3),
        }
