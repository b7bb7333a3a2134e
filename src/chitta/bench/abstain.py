"""The abstention benchmark: does chitta know when its store cannot answer? (issue 6)

Built from a LoCoMo-format file (LoCoMo, or LongMemEval written in its format). Each
conversation is a realm of one store. It is asked
- its own questions (with gold turns; LoCoMo's categories 1–4, adversarial aside; every
  LongMemEval type): *answerable*, the gold is in the store;
- a fixed sample of the other conversations' questions whose named people and things never
  occur in this realm: *unanswerable* here. The names are the question's capitalised words
  (question words aside) and the speakers of its gold turns when the speakers are people
  (LoCoMo's); every one must be absent. LongMemEval's speakers are the roles ``user`` and
  ``assistant``, present in every chat, so there only the question's own names count, and a
  question that names nothing ("What degree did I graduate with?") is never taken as
  unanswerable elsewhere: another user's chats may well mention a degree.

Beside each set's conversations, *small stores* (:func:`small_stores`): a realm of one to
five memories — a question's gold turns and a few other turns of its conversation — asked that
question (answerable) and one of the conversation's unanswerable ones, so that the
calibration is fitted and measured on stores of a user's first steps too.

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

from chitta.bench.locomo import LOCOMO, Conversation, Dataset, Question
from chitta.bench.runner import realm_for
from chitta.bench.score import score
from chitta.config import DEFAULT_REALM
from chitta.errors import BadArgument
from chitta.recall.confidence import calibration as calib
from chitta.recall.confidence.gate import GateSettings, Turn, admit, relaxed

#: Unanswerable questions asked of each store (a fixed, seeded sample of those eligible).
PER_STORE = 150
LIMIT = 10
#: Small stores per set and half (:func:`small_stores`), and their largest size.
SMALL_STORES = 60
SMALL_MAX = 5
#: Speakers that are roles, not people: present in every chat, they name nothing.
_ROLES = frozenset(["user", "assistant", "system"])
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
    small: bool = False  # asked of a small store (small_stores)


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
    size: int = 0  # the realm's live memories
    dataset: str = ""  # the set it belongs to (set_name)
    small: bool = False
    found: float = calib.NO_EVIDENCE  # how much of its distinctive words the first hits held
    held: int = 0  # how many of them the first hit held

    def as_dict(self) -> dict:
        return asdict(self)


def names_in(question: Question, speakers: dict[str, str]) -> set[str]:
    """The people and things a question names: its capitalised words, its gold speakers
    (unless they are roles such as ``user``)."""
    words = {w.lower() for w in _NAME.findall(question.question)} - _QUESTION_WORDS
    people = {speakers[g].lower() for g in question.gold if g in speakers}
    return words | (people - _ROLES)


def answerable_questions(dataset: Dataset) -> list[Question]:
    """The questions with gold turns a store is asked: LoCoMo's categories 1–4 (adversarial
    questions have no answer); every question of another dataset."""
    wanted = (1, 2, 3, 4) if dataset.categories is LOCOMO else None
    return [q for q in dataset.questions if q.gold and (wanted is None or q.category in wanted)]


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
    eligible = answerable_questions(dataset)
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


def small_realm(sample_id: str, index: int) -> str:
    return realm_for(f"small-{sample_id}-{index}")


def small_stores(
    dataset: Dataset,
    items: Sequence[AbstainQuestion],
    per_group: int = SMALL_STORES,
    groups: Sequence[set[str]] = (),
) -> tuple[list[tuple[str, Conversation]], list[AbstainQuestion]]:
    """Up to ``per_group`` small stores per group of conversations (all: one group), and the
    questions they are asked.

    Each is drawn (seeded) from an answerable question of ``items`` with at most
    :data:`SMALL_MAX` gold turns whose conversation has unanswerable questions in ``items``:
    its gold turns and, to a size drawn from 1 to :data:`SMALL_MAX`, other turns of its
    conversation. It is asked that question and one of the conversation's unanswerable ones
    (what names nothing in the whole conversation names nothing in a part of it). Returns
    the stores as (realm, the conversation cut to those turns) and the questions."""
    by_id = {c.sample_id: c for c in dataset.conversations}
    unanswerable: dict[str, list[Question]] = {}
    for item in items:
        if not item.answerable and not item.small:
            unanswerable.setdefault(item.realm, []).append(item.question)
    candidates = [i.question for i in items if i.answerable and not i.small
                  and len(set(i.question.gold)) <= SMALL_MAX
                  and unanswerable.get(realm_for(i.question.conversation))]  # fmt: skip
    parts = [set(g) for g in groups] or [set(by_id)]
    stores: list[tuple[str, Conversation]] = []
    asked: list[AbstainQuestion] = []
    for part in parts:
        pool = [q for q in candidates if q.conversation in part]
        rng = random.Random(f"small-{dataset.path}-{sorted(part)}")
        rng.shuffle(pool)
        for q in pool[:per_group]:
            conversation = by_id[q.conversation]
            gold = set(q.gold)
            size = max(len(gold), rng.randint(1, SMALL_MAX))
            rest = [t for t in conversation.turns if t.id not in gold]
            keep = gold | {t.id for t in rng.sample(rest, min(len(rest), size - len(gold)))}
            turns = tuple(t for t in conversation.turns if t.id in keep)
            realm = small_realm(q.conversation, q.index)
            stores.append((realm, Conversation(conversation.sample_id, turns,
                                               conversation.sessions, ())))  # fmt: skip
            other = rng.choice(unanswerable[realm_for(q.conversation)])
            asked += [AbstainQuestion(realm, q, True, small=True),
                      AbstainQuestion(realm, other, False, small=True)]  # fmt: skip
    return stores, asked


def probe(
    recall: Callable[[str, str], dict],
    item: AbstainQuestion,
    turn_of: dict,
    *,
    size: int = 0,
    dataset: str = "",
) -> Probe:
    """Recall one question (``recall(query, realm)`` returns the JSON shape of a recall) of
    a realm of ``size`` live memories."""
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
        size=size,
        dataset=dataset,
        small=item.small,
        found=conf.get("found", calib.NO_EVIDENCE),
        held=conf.get("held", 0),
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
    conf = [calib.confidence(p.raw, fit, p.size, p.found, p.held) for p in probes]
    p_cal = [c.calibrated for c in conf]
    hit = [p.hit3 for p in probes]
    answerable = [p.answerable for p in probes]
    # AUROC of what the band splits (the words held lift the chance shown, not the band).
    signal = [c.band_value for c in conf]
    pos = [c for c, a in zip(signal, answerable, strict=True) if a]
    neg = [c for c, a in zip(signal, answerable, strict=True) if not a]
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
