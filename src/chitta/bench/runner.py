"""Running systems over a dataset: the same turns, the same questions, timed per query."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chitta.bench.locomo import LOCOMO, Categories, Dataset
from chitta.bench.score import aggregate, score, summary_ms
from chitta.bench.systems.base import System


@dataclass(slots=True)
class SystemRun:
    """One system's figures over a run."""

    name: str
    categories: Categories = LOCOMO  # the dataset's names and groups (bench/locomo.py)
    load_s: float = 0.0
    query_ms: list[float] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)

    def summary(self) -> dict:
        return {
            "metrics": aggregate(
                ((r["category"], r["metrics"]) for r in self.rows), self.categories.groups
            ),
            "latency_ms": {**summary_ms(self.query_ms), "n": len(self.query_ms)},
            "load_s": round(self.load_s, 3),
        }


def realm_for(sample_id: str) -> str:
    return "locomo-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in sample_id)


def run(
    dataset: Dataset,
    systems: Sequence[System],
    *,
    k: int = 20,
    tick: Callable[[str], None] | None = None,
) -> tuple[dict[str, SystemRun], int]:
    """Load every conversation into every system and ask every question with gold turns.

    Each question is asked at its own "now" (``question_date``; the real clock when it has
    none). Returns each system's run and how many questions were skipped for having no gold
    turn.
    The systems take turns going first, question by question, so that drift in the machine's
    load falls on all of them alike.
    """
    runs = {s.name: SystemRun(s.name, dataset.categories) for s in systems}
    skipped = 0
    turn = 0
    for conversation in dataset.conversations:
        realm = realm_for(conversation.sample_id)
        for system in systems:
            start = time.perf_counter()
            system.load(realm, conversation)
            runs[system.name].load_s += time.perf_counter() - start
            if tick:
                tick(f"loaded {conversation.sample_id} into {system.name}")
        for question in conversation.questions:
            if not question.gold:
                skipped += 1
                continue
            turn += 1
            order = list(systems[turn % len(systems) :]) + list(systems[: turn % len(systems)])
            for system in order:
                start = time.perf_counter()
                ranked = system.search(realm, question.question, k, now_ms=question.now_ms)
                ms = (time.perf_counter() - start) * 1000
                record = runs[system.name]
                record.query_ms.append(ms)
                record.rows.append(
                    {
                        "system": system.name,
                        "conversation": question.conversation,
                        "question": question.index,
                        "category": question.category,
                        "gold": list(question.gold),
                        "ranked": ranked,
                        "metrics": score(ranked, question.gold),
                        "ms": round(ms, 3),
                    }
                )
            if tick:
                tick("question")
    return runs, skipped
