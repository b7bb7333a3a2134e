"""Cited recall on LoCoMo (issue 9): does the cited answer cite a gold turn, and does it abstain
where its store cannot answer?

Each conversation is a realm of one store. A question is asked through cited recall
(cited/run.py ``cited_recall``) with the default source set pointed at its realm — one
``chitta`` source, so the admission gate applies — and no model: the answer is extractive.
The questions are the abstention benchmark's set (bench/abstain.py ``build_set``): a
conversation's own questions of categories 1-4 with gold turns (*answerable*) and a seeded
sample of the other conversations' questions whose names never occur in this realm
(*unanswerable*), drawn within the tuning and the held-out group as ``bench abstain`` draws
them, so both benchmarks ask the same unanswerable questions.

Each question leaves a :class:`CitedProbe` (ids, codes and numbers, no text); :func:`figures`
sums them up. Besides "a citation is a gold turn" a probe records where gold was lost along
the way: in the recall's rows before the gate, in the chunks the source returned after it,
among the citations after the merge, and among those the extractive answer quotes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, cast

from chitta.bench.abstain import PER_STORE, AbstainQuestion, build_set
from chitta.bench.locomo import CATEGORIES, TUNE_SPLIT, Dataset
from chitta.bench.runner import realm_for
from chitta.bench.score import percentile
from chitta.cited import abstain as rules
from chitta.cited.run import cited_recall
from chitta.cited.settings import AbstainSettings, CitedSettings, SourceConfig
from chitta.cited.sources import build_sources, close_sources

if TYPE_CHECKING:
    from chitta.api import Chitta

#: Chunks asked of the source: seed 003's default ``--limit``.
LIMIT = 5
#: The name of the one source (the default set's: cited/config.py).
SOURCE = "memory"

#: Abstention reasons by class: (code, how the reason text begins), checked in order.
REASONS: tuple[tuple[str, str], ...] = (
    ("no_results", rules.NO_RESULTS),
    ("insufficient_sources", "Insufficient sources"),
    ("low_relevance", "Low relevance scores"),
    ("insufficient_evidence", "Insufficient evidence"),
    ("store_unknown", rules.STORE_UNKNOWN),
    ("extractive_no_match", rules.EXTRACTIVE_NO_MATCH),
)
#: Any other reason: a model's NO_ANSWER_AVAILABLE (none is configured here).
OTHER_REASON = "model"

_QUOTED = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def settings_for(realm: str, respect_band: bool = True) -> CitedSettings:
    """The default source set pointed at ``realm``: one ``chitta`` source, no model; with
    ``respect_band`` False, only the seed's abstention rules."""
    source = SourceConfig(name=SOURCE, kind="chitta", priority=1.0, options={"realms": [realm]})
    return CitedSettings(sources=(source,), abstain=AbstainSettings(respect_band=respect_band))


def question_set(
    dataset: Dataset,
    asked: Collection[str],
    df: Callable[[str, str], int],
    per_store: int = PER_STORE,
) -> list[AbstainQuestion]:
    """The abstention benchmark's questions for the stores of the conversations ``asked``.

    The set is built over the whole file with ``bench abstain``'s default groups (the tuning
    conversations and the others), then kept to the stores asked, so a store gets the same
    unanswerable questions whichever conversations a run selects. ``df(realm, word)`` must
    know the realms asked (those of the others are dropped anyway)."""
    ids = {c.sample_id for c in dataset.conversations}
    tune = ids & set(TUNE_SPLIT)
    items = build_set(dataset, df, per_store, groups=[tune, ids - tune])
    realms = {realm_for(sid) for sid in asked}
    return [item for item in items if item.realm in realms]


def reason_code(reason: str | None) -> str | None:
    """The class of an abstention reason (:data:`REASONS`), ``None`` for an answer."""
    if reason is None:
        return None
    for code, start in REASONS:
        if reason.startswith(start):
            return code
    return OTHER_REASON


def quoted_ids(answer: str | None) -> set[int]:
    """The citation ids an answer quotes: every N of its "[N]" and "[N, M]"."""
    if not answer:
        return set()
    return {int(n) for m in _QUOTED.finditer(answer) for n in m.group(1).split(",")}


@dataclass(frozen=True, slots=True)
class CitedProbe:
    """One question's cited recall, as the benchmark needs it (no stored text)."""

    realm: str  # the store (realm) it was asked of
    conversation: str  # where the question comes from
    index: int
    category: int
    answerable: bool
    abstained: bool
    reason: str | None  # the reason's class (:func:`reason_code`)
    band: str | None  # the recall's confidence band (KNOWN, UNKNOWN), which the gate acts on
    citations: int
    gold_recalled: bool  # a gold turn among the recall's rows, before the gate
    gold_returned: bool  # ... among the chunks the source returned (after the gate)
    gold_cited: bool  # ... among the citations (after the merge)
    gold_quoted: bool  # ... among the citations the answer quotes
    errors: int  # sources or model steps that failed (a timeout, say)
    ms: float  # the whole cited_recall call
    stage_ms: dict[str, float] = field(default_factory=dict)  # its timing_ms

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Watched:
    """The open store handed to the source unchanged, noting the ids each recall returned
    before the source's gate judges them."""

    def __init__(self, chitta: Chitta) -> None:
        self._chitta = chitta
        self.gate = chitta.gate
        self.recalled: list[str] = []
        self.band: str | None = None

    def recall(self, *args: Any, **kwargs: Any) -> Any:
        result = self._chitta.recall(*args, **kwargs)
        self.recalled.extend(h.memory.id for h in result.hits)
        if result.confidence is not None:
            self.band = result.confidence.band
        return result


def probe(
    chitta: Chitta,
    item: AbstainQuestion,
    turn_of: dict[str, str],
    limit: int = LIMIT,
    clock: Callable[[], float] = time.perf_counter,
    respect_band: bool = True,
) -> CitedProbe:
    """Ask ``item``'s question of its realm by cited recall; ``turn_of`` maps memory ids to
    LoCoMo turn ids (``ChittaStore.turn_of``)."""
    settings = settings_for(item.realm, respect_band)
    watched = _Watched(chitta)
    sources = build_sources(settings, cast("Chitta", watched))
    try:
        started = clock()
        answer = cited_recall(sources, item.question.question, settings, limit=limit)
        ms = (clock() - started) * 1000
    finally:
        close_sources(sources)
    gold = set(item.question.gold) if item.answerable else set()

    def has_gold(refs: Sequence[str | None]) -> bool:
        return any(turn_of.get(ref or "") in gold for ref in refs)

    quoted = quoted_ids(answer.synthesized_answer)
    return CitedProbe(
        realm=item.realm,
        conversation=item.question.conversation,
        index=item.question.index,
        category=item.question.category,
        answerable=item.answerable,
        abstained=answer.abstained,
        reason=reason_code(answer.abstention_reason),
        band=watched.band,
        citations=len(answer.citations),
        gold_recalled=has_gold(watched.recalled),
        gold_returned=has_gold([c.ref for c in answer.chunks]),
        gold_cited=has_gold([c.ref for c in answer.citations]),
        gold_quoted=has_gold([c.ref for c in answer.citations if c.citation_id in quoted]),
        errors=len(answer.errors),
        ms=round(ms, 3),
        stage_ms=dict(answer.timing_ms),
    )


def figures(probes: Sequence[CitedProbe]) -> dict[str, Any]:
    """The issue's figures: over the answerable questions the share whose citations hold a
    gold turn (an abstention counts as a miss; and among the answered ones), where gold was
    lost, the false abstentions; over the unanswerable ones the abstention rate by reason;
    per LoCoMo category; and the latency."""
    answerable = [p for p in probes if p.answerable]
    unanswerable = [p for p in probes if not p.answerable]
    return {
        "questions": {"answerable": len(answerable), "unanswerable": len(unanswerable)},
        "answerable": _answerable(answerable),
        "unanswerable": _abstentions(unanswerable),
        "by_category": {
            CATEGORIES.get(c, str(c)): _answerable([p for p in answerable if p.category == c])
            for c in sorted({p.category for p in answerable})
        },
        "latency_ms": {
            "all": _latency(probes),
            "answerable": _latency(answerable),
            "unanswerable": _latency(unanswerable),
        },
        "errors": sum(p.errors for p in probes),
    }


def _answerable(probes: Sequence[CitedProbe]) -> dict[str, Any]:
    answered = [p for p in probes if not p.abstained]
    return {
        "n": len(probes),
        "answered": len(answered),
        # The figure: an abstention is a miss, whatever it cites.
        "gold_cited": _share(sum(p.gold_cited and not p.abstained for p in probes), len(probes)),
        "gold_cited_answered": _share(sum(p.gold_cited for p in answered), len(answered)),
        # Where gold went, abstention aside: recall's rows, the gate, the merge, the answer.
        "funnel": {
            "recalled": _share(sum(p.gold_recalled for p in probes), len(probes)),
            "returned": _share(sum(p.gold_returned for p in probes), len(probes)),
            "cited": _share(sum(p.gold_cited for p in probes), len(probes)),
            "quoted": _share(sum(p.gold_quoted for p in probes), len(probes)),
        },
        "abstained": _abstentions(probes),
    }


def _abstentions(probes: Sequence[CitedProbe]) -> dict[str, Any]:
    """How many abstained, the rate, and the count per reason class."""
    reasons: dict[str, int] = {}
    for p in probes:
        if p.abstained:
            code = p.reason or OTHER_REASON
            reasons[code] = reasons.get(code, 0) + 1
    count = sum(reasons.values())
    bands: dict[str, dict[str, int]] = {}
    for p in probes:
        band = bands.setdefault(p.band or "none", {"n": 0, "abstained": 0})
        band["n"] += 1
        band["abstained"] += p.abstained
    return {
        "n": len(probes),
        "count": count,
        "rate": _share(count, len(probes)),
        "by_reason": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_band": dict(sorted(bands.items())),
    }


def _latency(probes: Sequence[CitedProbe]) -> dict[str, Any]:
    """p50 / p95 of the whole call, and the p50 of each stage, in ms."""
    total = [p.ms for p in probes]
    out: dict[str, Any] = {
        "n": len(total),
        "p50": round(percentile(total, 50), 2),
        "p95": round(percentile(total, 95), 2),
    }
    stages = sorted({s for p in probes for s in p.stage_ms})
    out["stages_p50"] = {
        s: round(percentile([p.stage_ms[s] for p in probes if s in p.stage_ms], 50), 2)
        for s in stages
    }
    return out


def _share(count: int, n: int) -> float | None:
    return round(count / n, 4) if n else None
