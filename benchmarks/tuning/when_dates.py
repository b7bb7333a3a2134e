"""What the ``when`` lane is worth, and what a wrong date costs (issue 19's tuning aid).

Over the questions of both development sets that name a time (those ``read_when`` reads a
cue from), recall@10 / nDCG@10 of ``hybrid`` three ways: without the lane (``--ablate
when``), with it, and with every absolute date it reads moved 183 days earlier (the time cue
benchmark's wrong cue; relative words are left as read). Not part of chitta.

    python benchmarks/tuning/when_dates.py tune --weight 0.4 [--vector-cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import chitta.recall.config as recall_config
from chitta.bench.devsets import bench_embedder, loaded_sets
from chitta.bench.runner import realm_for
from chitta.bench.score import score
from chitta.recall.lanes import when as when_lane
from chitta.recall.timecue.cue import TimeCue
from chitta.recall.timecue.words import DAY_MS, read_when

SHIFT_MS = 183 * DAY_MS
WAYS = (("without", ["when"], False), ("with", [], False), ("wrong", [], True))
#: Any time after both sets' last sessions: only whether a question names a time is read.
LATE = 1_900_000_000_000


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("half", choices=("tune", "held-out"))
    args.add_argument("--weight", type=float, default=None, help="when's rsf weight")
    args.add_argument("--vector-cache", type=Path)
    opts = args.parse_args()
    if opts.weight is not None:
        hybrid = recall_config.PRESETS["hybrid"]
        lanes = MappingProxyType(dict(hybrid.rsf_lanes, when=opts.weight))
        presets = dict(recall_config.PRESETS, hybrid=replace(hybrid, rsf_lanes=lanes))
        recall_config.PRESETS = MappingProxyType(presets)
    wrong = {"on": False}
    when_lane.read_when = lambda text, now, holds: _moved(read_when(text, now, holds), wrong)
    for set_name, data, store in loaded_sets(opts.half, bench_embedder(opts.vector_cache)):
        chitta = store.open()
        rows: dict[object, list[dict[str, tuple[float, float]]]] = {}
        for conv in data.conversations:
            for q in conv.questions:
                if not q.gold or read_when(q.question, q.now_ms or LATE, _any) is None:
                    continue
                row = {}
                for way, ablate, moved in WAYS:
                    wrong["on"] = moved
                    result = chitta.recall(q.question, realm=realm_for(conv.sample_id), limit=20,
                                           record=False, now=q.now_ms, ablate=ablate)  # fmt: skip
                    s = score([store.turn_of[h.memory.id] for h in result.hits], q.gold)
                    row[way] = (s["recall@10"], s["ndcg@10"])
                rows.setdefault(q.category, []).append(row)
        _report(set_name, rows, data.categories.names)


def _moved(cue: TimeCue | None, wrong: dict[str, bool]) -> TimeCue | None:
    if cue is None or not wrong["on"] or cue.after_ms is None or cue.before_ms is None:
        return cue
    return replace(cue, after_ms=cue.after_ms - SHIFT_MS, before_ms=cue.before_ms - SHIFT_MS)


def _any(start_ms: int, end_ms: int) -> bool:
    return True


def _report(set_name: str, rows: dict, names: dict) -> None:
    groups = {names.get(c, str(c)): r for c, r in sorted(rows.items(), key=lambda kv: str(kv[0]))}
    # LoCoMo's overall figure leaves its adversarial category out, as the harness does.
    groups["all"] = [r for c, rs in rows.items() if not (set_name == "locomo" and c == 5)
                     for r in rs]  # fmt: skip
    for name, rs in groups.items():
        if not rs:
            continue
        cells = " ".join(
            f"{way}={statistics.fmean(r[way][0] for r in rs):.3f}/"
            f"{statistics.fmean(r[way][1] for r in rs):.3f}"
            for way, _, _ in WAYS
        )
        print(f"{set_name} {name} n={len(rs)} {cells}")


if __name__ == "__main__":
    main()
