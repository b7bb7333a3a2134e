"""Results files of a LoCoMo run: the JSON record, per-question JSONL, a Markdown table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from chitta.bench.locomo import LOCOMO, Categories, Dataset
from chitta.bench.runner import SystemRun
from chitta.files import write_private

#: A metric's name in a table's title.
_TITLES = {"recall@10": "recall@10", "ndcg@10": "nDCG@10", "mrr": "MRR"}


def results_record(
    dataset: Dataset,
    runs: Mapping[str, SystemRun],
    *,
    skipped: int,
    settings: dict[str, Any],
    environment: dict[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    """The results JSON: where and how it ran, what was repaired, every system's figures."""
    return {
        "benchmark": "locomo",
        **environment,
        "settings": settings,
        "data": {
            "path": dataset.path,
            "conversations": len(dataset.conversations),
            "turns": sum(len(c.turns) for c in dataset.conversations),
            "questions": len(dataset.questions),
            "questions_without_gold": skipped,
            "categories": dataset.categories.as_record(),
            "evidence_repairs": [
                {
                    "conversation": r.conversation,
                    "question": r.question,
                    "raw": r.raw,
                    "repaired": list(r.repaired),
                    "dropped": list(r.dropped),
                }
                for r in dataset.repairs
            ],  # fmt: skip
        },
        "systems": {name: run.summary() for name, run in runs.items()},
        "notes": notes,
    }


def write_questions(runs: Mapping[str, SystemRun], path: Path) -> None:
    """Every system's per-question rows, one JSON object a line (for ``bench compare``)."""

    def write(fh: IO[str]) -> None:
        for run in runs.values():
            for row in run.rows:
                fh.write(json.dumps(row) + "\n")

    write_private(path, write)  # owner-only (chitta/files.py)


def markdown(record: dict[str, Any], command: str) -> str:
    """Tables under the dataset's own category names: recall@10 per category with latency,
    the other metrics the dataset tables per category (LongMemEval: nDCG@10 and MRR), then
    every metric over all questions."""
    systems = record["systems"]
    categories = Categories.from_record(record["data"].get("categories"))
    groups = categories.keys()
    header = ["system"] + [categories.label(g) for g in groups]
    lines = [
        f"### {categories.dataset} run, {str(record.get('created_at'))[:10]}",
        "",
        f"Command: `{command}` (commit {str(record.get('commit'))[:12]}, "
        f"{record.get('created_at')}; {record['data']['questions']} questions, "
        f"{record['data']['turns']} turns)",
        "",
        "recall@10 per category, and query latency:",
        "",
        "| " + " | ".join([*header, "p50 ms", "p95 ms"]) + " |",
        "|" + "---|" * (len(header) + 2),
    ]
    for name, s in systems.items():
        m = s["metrics"]
        cells = [f"{m[g]['recall@10']:.3f}" if g in m else "–" for g in groups]
        lat = s["latency_ms"]
        lines.append(f"| {name} | " + " | ".join([*cells, f"{lat['p50']:.2f}",
                                                  f"{lat['p95']:.2f}"]) + " |")  # fmt: skip
    lines += ablation_lines(systems, categories)
    for metric in (m for m in categories.per_category if m != "recall@10"):
        lines += ["", f"{_TITLES.get(metric, metric)} per category:", "",
                  "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]  # fmt: skip
        for name, s in systems.items():
            m = s["metrics"]
            cells = [f"{m[g][metric]:.3f}" if g in m else "–" for g in groups]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = next(iter(systems.values()))["metrics"] if systems else {}
    lines += [
        "",
        "Questions per group: "
        + ", ".join(f"{g}: {int(counts[g]['n'])}" for g in groups if g in counts),
        "",
        "All questions:",
        "",
        "| system | recall@5 | recall@10 | recall@20 | hit@10 | nDCG@10 | MRR | load s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, s in systems.items():
        a = s["metrics"].get("all")
        if a is None:
            continue
        lines.append(
            f"| {name} | {a['recall@5']:.3f} | {a['recall@10']:.3f} | {a['recall@20']:.3f} | "
            f"{a['hit@10']:.3f} | {a['ndcg@10']:.3f} | {a['mrr']:.3f} | {s['load_s']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def ablation_lines(systems: Mapping[str, Any], categories: Categories = LOCOMO) -> list[str]:
    """A table of recall@10 deltas: each ``chitta:<strategy>-<lanes>`` system against the
    longest-named system it extends (what switching those lanes off cost, per category of
    ``categories``); empty when the run has no such pair."""
    groups = categories.keys()
    rows = []
    for name, s in systems.items():
        # chitta:hybrid-tag-sem is compared with chitta:hybrid-tag when that ran too.
        base_name, _, lanes = name.rpartition("-")
        while base_name and base_name not in systems and "-" in base_name:
            base_name, _, more = base_name.rpartition("-")
            lanes = f"{more}-{lanes}"
        base = systems.get(base_name)
        if not name.startswith("chitta:") or base is None:
            continue
        cells = []
        for g in groups:
            if g in s["metrics"] and g in base["metrics"]:
                delta = s["metrics"][g]["recall@10"] - base["metrics"][g]["recall@10"]
                cells.append(f"{delta:+.3f}")
            else:
                cells.append("–")
        rows.append(f"| {base_name} without {lanes.replace('-', ', ')} | " + " | ".join(cells)
                    + " |")  # fmt: skip
    if not rows:
        return []
    header = [categories.label(g) for g in groups]
    return [
        "",
        "Ablation: recall@10 change when lanes are switched off (negative: the lane helps):",
        "",
        "| " + " | ".join(["system", *header]) + " |",
        "|" + "---|" * (len(header) + 1),
        *rows,
    ]
