"""Does hygiene pay? (issue 21, part 5) Near-duplicate turns merged, gold turns kept, recall
before and after.

    python benchmarks/hygiene.py OUT.json [--half tune|held-out|all] [--vector-cache DIR]

Each development set's conversations are imported as they are (one memory per turn, past
the write-time gate, as an import is: repeated greetings, thanks and restated facts stay),
each question asked once with ``hybrid``; then a hygiene run over every realm (what `chitta
hygiene` and the daemon's daily sweep do), and the same questions again. Reported per set:
memories merged, gold turns superseded (a turn some question needs, now hidden behind its
cluster's kept member), gold turns lost (superseded by a member that is not itself a gold
turn of that question: the labels can no longer find it), and recall@10 / nDCG@10 before
and after, per category.

Not part of chitta; the figures are in docs/benchmarks.md ("Does hygiene pay?").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from chitta.bench import environment, locomo
from chitta.bench.devsets import bench_embedder, loaded_sets
from chitta.bench.runner import realm_for
from chitta.bench.score import score, summary
from chitta.bench.systems.chitta import ChittaStore


def _ask(store: ChittaStore, data: locomo.Dataset) -> list:
    chitta = store.open()
    rows = []
    for conv in data.conversations:
        realm = realm_for(conv.sample_id)
        for q in conv.questions:
            if q.gold:
                result = chitta.recall(q.question, realm=realm, limit=10, record=False,
                                       now=q.now_ms)  # fmt: skip
                ranked = [store.turn_of[h.memory.id] for h in result.hits]
                rows.append((q.category, score(ranked, q.gold)))
    return rows


def _gold_fate(store: ChittaStore, data: locomo.Dataset) -> dict:
    """Gold turns superseded, and of those, lost (kept by a non-gold member); each lost one
    with the turn that kept it and whether their texts are the same."""
    chitta = store.open()
    memory_of = {turn: m for m, turn in store.turn_of.items()}
    superseded, lost = 0, []
    for conv in data.conversations:
        for q in conv.questions:
            for turn in q.gold:
                mid = memory_of.get(turn)
                if mid is None:
                    continue
                m = chitta.store.get(mid, include_deleted=True)
                if m.superseded_by is None:
                    continue
                superseded += 1
                kept = store.turn_of.get(m.superseded_by)
                if kept not in q.gold:
                    same = chitta.store.get(m.superseded_by).content == m.content
                    lost.append({"turn": turn, "kept_by": kept, "same_text": same})
    return {"gold_superseded": superseded, "gold_lost": len(lost), "lost": lost}


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("out", type=Path)
    args.add_argument("--half", choices=("tune", "held-out", "all"), default="all")
    args.add_argument("--vector-cache", type=Path)
    opts = args.parse_args()
    results: dict = {"command": " ".join(sys.argv), "half": opts.half,
                     "commit": environment.git_commit(), "machine": environment.machine(),
                     "loadavg": [environment.loadavg()]}  # fmt: skip
    select = None if opts.half == "all" else opts.half
    for set_name, data, store in loaded_sets(select, bench_embedder(opts.vector_cache)):
        before = summary(_ask(store, data))
        chitta, merged, conflicts, started = store.open(), 0, 0, time.perf_counter()
        memories = sum(1 for _ in chitta.store.iter_memories())
        for conv in data.conversations:
            plan = chitta.hygiene(realm_for(conv.sample_id))
            merged += sum(len(m.merged) for m in plan.merges)
            conflicts += len(plan.conflicts)
        seconds = time.perf_counter() - started
        fate = _gold_fate(store, data)
        after = summary(_ask(store, data))
        results[set_name] = {"memories": memories, "merged": merged, "conflicts": conflicts,
                             "hygiene_s": round(seconds, 1), **fate, "before": before,
                             "after": after}  # fmt: skip
        print(set_name, json.dumps({k: v for k, v in results[set_name].items()
                                    if k not in ("before", "after")}),
              "recall@10 / nDCG@10", before["recall@10"], before["ndcg@10"], "->",
              after["recall@10"], after["ndcg@10"], flush=True)  # fmt: skip
    results["loadavg"].append(environment.loadavg())
    opts.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
