"""Does learning pay? (issue 21) The resonance learner fed simulated feedback on one half of a
development set, measured on the other.

The tuning half's questions are asked in a fixed shuffled order, over and over, each as an
agent's recall (recorded: the learner draws its parameters); after each, every returned row
gets the feedback a diligent agent would give: ``strengthen`` for a gold turn, ``weaken``
for any other. With ``wrong`` > 0, each event is the opposite one with that probability (a
careless or mistaken agent). At each checkpoint (a number of feedback events) the held-out
half's questions are asked unrecorded, so with the learned parameters' means (learn/learner.py),
and scored; and again recorded, as an agent asks, so with the parameters the learner draws
(what exploring costs). Checkpoint 0 is the fixed preset: a learner with no feedback changes
nothing.

One learned state serves both halves (``Learner(shared=...)``): per realm, as chitta keeps it,
the held-out realms would have nothing learned. The feedback changes the tuning half's
memories (strength, confidence), never the held-out half's, so what moves the held-out
figures is the learned parameters alone.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.bench import locomo
from chitta.bench.runner import realm_for
from chitta.bench.score import ndcg_at, recall_at
from chitta.bench.systems.chitta import ChittaStore
from chitta.embed.base import Embedder
from chitta.learn.learner import Learner

LIMIT = 10
CHECKPOINTS = (0, 100, 500, 2000)
#: The learned state's name in the benchmark's store (one for every realm).
SHARED_STATE = "bench-learn"


@dataclass(frozen=True, slots=True)
class Asked:
    realm: str
    question: locomo.Question


def questions(data: locomo.Dataset) -> list[Asked]:
    return [Asked(realm_for(c.sample_id), q) for c in data.conversations for q in c.questions
            if q.gold]  # fmt: skip


def measure(store: ChittaStore, asked: Sequence[Asked], *, drawn: bool = False) -> dict[str, float]:
    """Mean recall@10 and nDCG@10 of ``asked``: unrecorded, so with the learner's means; or
    ``drawn``, recorded as an agent's recall is, so with the parameters it draws (no feedback
    follows, and the access history it writes weighs nothing in the default scoring)."""
    chitta = store.open()
    recalls, ndcgs = [], []
    for a in asked:
        result = chitta.recall(a.question.question, realm=a.realm, limit=LIMIT, record=drawn,
                               now=a.question.now_ms)  # fmt: skip
        ranked = [store.turn_of[h.memory.id] for h in result.hits]
        gold = set(a.question.gold)
        recalls.append(recall_at(ranked, gold, LIMIT))
        ndcgs.append(ndcg_at(ranked, gold, LIMIT))
    return {"recall@10": round(statistics.fmean(recalls), 4),
            "ndcg@10": round(statistics.fmean(ndcgs), 4)}  # fmt: skip


def run_learning(
    data: Path,
    home: Path,
    embedder: Embedder,
    *,
    wrong: float = 0.0,
    checkpoints: Sequence[int] = CHECKPOINTS,
    seed: int = 21,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """One learning run on ``data`` (LoCoMo's format): held-out figures at each checkpoint,
    the learned parameters at the last, and how the feedback went."""
    tune, held = locomo.load(data, select="tune"), locomo.load(data, select="held-out")
    store = ChittaStore(home, embedder)
    try:
        for conversation in (*tune.conversations, *held.conversations):
            store.load(realm_for(conversation.sample_id), conversation)
        chitta = store.open()
        chitta.learner = Learner(chitta.store, shared=SHARED_STATE)
        training, held_out = questions(tune), questions(held)
        rng = random.Random(seed)
        order = list(training)
        rng.shuffle(order)
        marks = sorted(set(checkpoints))
        rows = []
        events, asked, flipped = 0, 0, 0
        train_ndcg: list[float] = []
        progress(f"checkpoint 0 of {marks[-1]}")
        rows.append(_checkpoint(store, held_out, 0))
        pending = [m for m in marks if m > 0]
        while pending:
            a = order[asked % len(order)]
            asked += 1
            result = chitta.recall(a.question.question, realm=a.realm, limit=LIMIT,
                                   now=a.question.now_ms)  # fmt: skip
            ranked = [store.turn_of[h.memory.id] for h in result.hits]
            train_ndcg.append(ndcg_at(ranked, set(a.question.gold), LIMIT))
            for hit, turn in zip(result.hits, ranked, strict=True):
                good = turn in a.question.gold
                if rng.random() < wrong:
                    good, flipped = not good, flipped + 1
                (chitta.strengthen if good else chitta.weaken)(hit.memory.id)
                events += 1
                if events == pending[0]:
                    progress(f"checkpoint {events} of {marks[-1]}")
                    rows.append(_checkpoint(store, held_out, events))
                    pending.pop(0)
                    if not pending:
                        break
        status = chitta.learner.status(SHARED_STATE)
    finally:
        store.close()
    return {
        "data": data.name,
        "wrong": wrong,
        "seed": seed,
        "training_questions": len(training),
        "held_out_questions": len(held_out),
        "recalls": asked,
        "events": events,
        "flipped": flipped,
        "checkpoints": rows,
        "training_ndcg": _thirds(train_ndcg),
        "learned": status["strategies"].get("hybrid", {}).get("params", {}),
        "contexts": status["strategies"].get("hybrid", {}).get("contexts", {}),
    }


def _checkpoint(store: ChittaStore, held_out: Sequence[Asked], events: int) -> dict[str, Any]:
    """The held-out half with the learned means, and with draws as an agent gets them."""
    return {"events": events, **measure(store, held_out),
            "drawn": measure(store, held_out, drawn=True)}  # fmt: skip


def _thirds(values: list[float]) -> list[float]:
    """The mean of each third of ``values`` (does the training half's own nDCG move?)."""
    if len(values) < 3:
        return [round(statistics.fmean(values), 4)] if values else []
    n = len(values) // 3
    parts = (values[:n], values[n : 2 * n], values[2 * n :])
    return [round(statistics.fmean(p), 4) for p in parts]


def markdown(record: dict[str, Any]) -> str:
    """The results as the docs show them: per set and feedback, each checkpoint's figures
    against the fixed preset's (checkpoint 0)."""
    lines = [
        "| set | wrong feedback | events | recall@10 | Δ | nDCG@10 | Δ | drawn: recall@10 "
        "| nDCG@10 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in record["runs"]:
        base = run["checkpoints"][0]
        for row in run["checkpoints"]:
            drawn = row["drawn"]
            lines.append(
                f"| {run['data']} | {round(run['wrong'] * 100)} % | {row['events']} "
                f"| {row['recall@10']:.4f} | {row['recall@10'] - base['recall@10']:+.4f} "
                f"| {row['ndcg@10']:.4f} | {row['ndcg@10'] - base['ndcg@10']:+.4f} "
                f"| {drawn['recall@10']:.4f} | {drawn['ndcg@10']:.4f} |"
            )
    lines += ["", "| set | wrong feedback | parameter | preset | learned mean | sd |",
              "|---|---|---|---:|---:|---:|"]  # fmt: skip
    for run in record["runs"]:
        for name, p in run["learned"].items():
            lines.append(f"| {run['data']} | {round(run['wrong'] * 100)} % | {name} "
                         f"| {p['preset']} | {p['mean']} | {p['sd']} |")  # fmt: skip
    return "\n".join(lines) + "\n"
