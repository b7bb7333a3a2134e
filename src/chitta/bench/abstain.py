"""The abstention benchmark: does chitta know when its store cannot answer? (issue 6)

Built from a LoCoMo-format file. Each conversation is a realm of one store. It is asked
- its own questions (categories 1–4, with gold turns): *answerable*, the gold is in the store;
- a fixed sample of the other conversations' questions whose named people and things never
  occur in this realm: *unanswerable* here. The names are the question's capitalised words
  (question words aside) and the speakers of its gold turns; every one must be absent.

Each question is recalled once (hybrid, limit 10) and leaves a :class:`Probe`: the raw
maximum relevance, whether the top 3 holds a gold turn, recall@10, and what the admission
gate needs to replay its rules offline (shared distinctive tokens, normalised BM25). A
calibration is fitted on one set of conversations and measured on another
(:func:`measure`), so the figures are not read off the data they were fitted on.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from chitta.bench.locomo import Conversation, Dataset, Question
from chitta.bench.runner import realm_for
from chitta.bench.score import score
from chitta.config import DEFAULT_REALM
from chitta.errors import BadArgument
from chitta.recall.confidence import calibration as calib
from chitta.recall.confidence.gate import GateSettings, Turn, admit, relaxed

#: Unanswerable questions asked of each store (a fixed, seeded sample of those eligible).
PER_STORE = 150
LIMIT = 10
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_QUESTION_WORDS = frozenset(
    [
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "which",
        "did",
        "does",
        "do",
        "is",
        "was",
        "were",
        "has",
        "have",
        "had",
        "would",
        "could",
        "can",
        "should",
        "will",
        "in",
        "on",
        "at",
        "for",
    ]
)


@dataclass(frozen=True, slots=True)
class AbstainQuestion:
    realm: str  # the store (realm) it is asked of
    question: Question
    answerable: bool


@dataclass(frozen=True, slots=True)
class Probe:
    """One question's recall, as the benchmark needs it."""

    realm: str
    conversation: str  # where the question comes from
    index: int
    category: int
    answerable: bool
    raw: float
    hit3: bool
    recall10: float
    hits: tuple[dict, ...]  # per hit: turn id, shared tokens, kw_norm
    distinctive: tuple[str, ...]
    terse: bool

    def as_dict(self) -> dict:
        return asdict(self)


def names_in(question: Question, speakers: dict[str, str]) -> set[str]:
    """The people and things a question names: its capitalised words, its gold speakers."""
    words = {w.lower() for w in _NAME.findall(question.question)} - _QUESTION_WORDS
    return words | {speakers[g].lower() for g in question.gold if g in speakers}


def build_set(
    dataset: Dataset,
    df: Callable[[str, str], int],
    per_store: int = PER_STORE,
    groups: Sequence[set[str]] = (),
) -> list[AbstainQuestion]:
    """The abstention set; ``df(realm, word)`` says how many of a realm's memories hold a word.

    ``groups`` partitions the conversations (e.g. the fitting and the held-out ones): a
    store's unanswerable questions are then drawn only from its own group, so that no
    question is seen both where a calibration is fitted and where it is measured."""
    group_of = {sid: i for i, group in enumerate(groups) for sid in group}
    out: list[AbstainQuestion] = []
    eligible = [q for q in dataset.questions if q.gold and q.category in (1, 2, 3, 4)]
    speakers = {(c.sample_id, t.id): t.speaker for c in dataset.conversations for t in c.turns}
    for conversation in dataset.conversations:
        realm = realm_for(conversation.sample_id)
        own = [q for q in eligible if q.conversation == conversation.sample_id]
        out += [AbstainQuestion(realm, q, True) for q in own]
        others = []
        for q in eligible:
            if q.conversation == conversation.sample_id or group_of.get(
                q.conversation
            ) != group_of.get(conversation.sample_id):
                continue
            names = names_in(
                q,
                {
                    g: speakers[(q.conversation, g)]
                    for g in q.gold
                    if (q.conversation, g) in speakers
                },
            )
            if names and all(df(realm, name) == 0 for name in names):
                others.append(q)
        random.Random(realm).shuffle(others)
        out += [AbstainQuestion(realm, q, False) for q in others[:per_store]]
    return out


def probe(recall: Callable[[str, str], dict], item: AbstainQuestion, turn_of: dict) -> Probe:
    """Recall one question (``recall(query, realm)`` returns the JSON shape of a recall)."""
    data = recall(item.question.question, item.realm)
    ranked = [turn_of.get(h["id"], "") for h in data["hits"]]
    gold = item.question.gold if item.answerable else ()
    metrics = score(ranked, gold) if gold else {}
    hits = tuple(
        {
            "turn": turn_of.get(h["id"], ""),
            "shared": h.get("shared", []),
            "kw_norm": h.get("kw_norm"),
        }
        for h in data["hits"]
    )
    conf = data["confidence"] or {"raw": -1.0}
    return Probe(
        realm=item.realm,
        conversation=item.question.conversation,
        index=item.question.index,
        category=item.question.category,
        answerable=item.answerable,
        raw=conf["raw"],
        hit3=bool(set(ranked[:3]) & set(gold)),
        recall10=metrics.get("recall@10", 0.0),
        hits=hits,
        distinctive=tuple(data["turn"]["distinctive"]),
        terse=data["turn"]["terse_negation"],
    )


def gated_recall10(p: Probe, gold: Sequence[str], band: str, settings: GateSettings) -> float:
    """recall@10 of the rows the gate admits as the hook's ``hyb`` lane under ``band``."""
    turn = Turn(p.distinctive, p.terse)
    relax = relaxed(p.realm, DEFAULT_REALM, len(p.hits), LIMIT, p.raw, settings)
    kept = [
        h["turn"]
        for h in p.hits
        if admit(
            "hyb",
            h["shared"],
            band=band,
            turn=turn,
            settings=settings,
            relax=relax,
            kw_norm=h["kw_norm"],
        ).admitted
    ]
    return len(set(kept) & set(gold)) / len(set(gold)) if gold else 0.0


def measure(
    probes: Sequence[Probe],
    fit: calib.Calibration,
    gold_of: dict[tuple[str, int], tuple[str, ...]],
    settings: GateSettings = GateSettings(),  # noqa: B008 - frozen
) -> dict:
    """The figures of issue 6 for ``probes`` under ``fit``."""
    if all(p.answerable for p in probes) or not any(p.answerable for p in probes):
        raise BadArgument("the abstention figures need both answerable and unanswerable "
                          "questions; this set has only one kind")  # fmt: skip
    conf = [calib.confidence(p.raw, fit) for p in probes]
    p_cal = [c.calibrated for c in conf]
    hit = [p.hit3 for p in probes]
    answerable = [p.answerable for p in probes]
    pos = [c for c, a in zip(p_cal, answerable, strict=True) if a]
    neg = [c for c, a in zip(p_cal, answerable, strict=True) if not a]
    known = [c.band == calib.KNOWN for c in conf]
    refit = calib.loo_refit(p_cal, hit)
    bands = {}
    for name, flag in ((calib.KNOWN, True), (calib.UNKNOWN, False)):
        members = [h for h, k in zip(hit, known, strict=True) if k == flag]
        bands[name] = {
            "n": len(members),
            "hit@3": round(sum(members) / len(members), 4) if members else None,
        }
    bands_answerable = {}
    for name, flag in ((calib.KNOWN, True), (calib.UNKNOWN, False)):
        members = [h for h, k, a in zip(hit, known, answerable, strict=True) if k == flag and a]
        bands_answerable[name] = {
            "n": len(members),
            "hit@3": round(sum(members) / len(members), 4) if members else None,
        }
    answerable_p = [c.calibrated for c, a in zip(conf, answerable, strict=True) if a]
    answerable_hit = [h for h, a in zip(hit, answerable, strict=True) if a]
    plain, gated = [], []
    for p, c in zip(probes, conf, strict=True):
        if not p.answerable:
            continue
        gold = gold_of[(p.conversation, p.index)]
        plain.append(p.recall10)
        gated.append(gated_recall10(p, gold, c.band, settings))
    n_ans = sum(answerable)
    n_un = len(probes) - n_ans
    return {
        "questions": {"answerable": n_ans, "unanswerable": n_un},
        "auroc": round(calib.auroc(pos, neg), 4),
        "ece_raw": round(calib.ece(p_cal, hit), 4),
        "ece_shown": round(calib.ece([c.shown for c in conf], hit), 4),
        "ece_refit_loo": round(calib.ece(refit, hit), 4),
        "mean_calibrated": round(sum(p_cal) / len(p_cal), 4),
        "hit@3": round(sum(hit) / len(hit), 4),
        "bands": bands,
        "bands_answerable": bands_answerable,
        "ece_raw_answerable": round(calib.ece(answerable_p, answerable_hit), 4),
        "answerable_in_unknown": round(
            sum(1 for a, k in zip(answerable, known, strict=True) if a and not k) / n_ans, 4
        ),
        "unanswerable_in_known": round(
            sum(1 for a, k in zip(answerable, known, strict=True) if not a and k) / n_un, 4
        ),
        "recall@10_answerable": round(sum(plain) / len(plain), 4),
        "recall@10_answerable_gated": round(sum(gated) / len(gated), 4),
        "reliability": reliability(p_cal, hit),
    }


def reliability(predicted: Sequence[float], outcome: Sequence[bool]) -> list[dict]:
    """Per tenth of predicted chance: how many, the mean prediction, the observed rate."""
    rows = []
    for b in range(calib.ECE_BINS):
        members = [
            (p, o)
            for p, o in zip(predicted, outcome, strict=True)
            if min(int(p * calib.ECE_BINS), calib.ECE_BINS - 1) == b
        ]
        if members:
            rows.append(
                {
                    "bin": f"{b / 10:.1f}-{(b + 1) / 10:.1f}",
                    "n": len(members),
                    "predicted": round(sum(p for p, _ in members) / len(members), 3),
                    "observed": round(sum(o for _, o in members) / len(members), 3),
                }
            )
    return rows


def conversations_of(dataset: Dataset, ids: Sequence[str]) -> list[Conversation]:
    return [c for c in dataset.conversations if c.sample_id in set(ids)]
