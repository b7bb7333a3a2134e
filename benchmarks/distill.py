"""The model-free distiller measured (issue 22, part 1): its precision on the frozen labelled
samples, how much it picks from the development sets, and what it costs a turn.

    python benchmarks/distill.py benchmarks/results/distill.json [--turns 400]

- **Precision and recall** on each sample of ``benchmarks/distill/`` (benchmarks/
  distill_sample.py says how each was drawn and when it was labelled): a pick is right when
  its label is the hand label.
- **What it picks** from every turn of both development sets: fragments per 1,000 turns, by
  label and by side.
- **Cost**: the rules alone over every turn (median per turn), and a real store's
  ``remember`` of ``--turns`` LongMemEval turns as the Stop hook records them (an episode
  with its session and role), with distillation off, with the rules, and with the rules and a
  model configured (each turn marks its session as waiting): the median and p95 per turn,
  and the fragments stored.

Not part of chitta; the figures are in docs/benchmarks.md ("Distillation").
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from chitta.api import Chitta
from chitta.bench import environment
from chitta.config import Settings
from chitta.distill.rules import LABELS, classify, fragments
from chitta.store.records import Source

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
SAMPLES = ("sample", "heldout", "fresh")


def precision(name: str) -> dict:
    rows = [json.loads(line) for line in (HERE / "distill" / f"{name}.jsonl").open()]
    picked = [(r["label"], classify(r["text"], r["role"])) for r in rows]
    out = {"sentences": len(rows), "labelled": sum(r["label"] != "none" for r in rows)}
    out["picked"] = sum(1 for _, got in picked if got)
    out["right"] = sum(1 for label, got in picked if got and got == label)
    out["precision"] = round(out["right"] / out["picked"], 3) if out["picked"] else None
    out["recall"] = round(out["right"] / out["labelled"], 3) if out["labelled"] else None
    out["by_label"] = {
        label: {"labelled": sum(1 for lab, _ in picked if lab == label),
                "picked": sum(1 for _, got in picked if got == label),
                "right": sum(1 for lab, got in picked if got == label == lab)}
        for label in LABELS
    }  # fmt: skip
    return out


def turns() -> list[tuple[str, str, str]]:
    """(set, role, text) of every turn of both development sets."""
    out = []
    for name, path in (("lme", "longmemeval_s_dev60.json"), ("locomo", "locomo10.json")):
        for item in json.loads((DATA / path).read_text(encoding="utf-8")):
            for key, session in item["conversation"].items():
                if key.startswith("session_") and not key.endswith("date_time"):
                    for turn in session:
                        role = turn["speaker"] if name == "lme" else "user"
                        out.append((name, role, turn.get("text", "")))
    return out


def picks(all_turns: list[tuple[str, str, str]]) -> dict:
    counts: Counter = Counter()
    per_turn_us = []
    for name, role, text in all_turns:
        t = time.perf_counter()
        found = fragments(text, role)
        per_turn_us.append((time.perf_counter() - t) * 1e6)
        counts[(name, role, "turns")] += 1
        for f in found:
            counts[(name, role, f.label)] += 1
    sides = {}
    for name, role in sorted({(n, r) for n, r, _ in counts}):
        n = counts[(name, role, "turns")]
        sides[f"{name}-{role}"] = {
            "turns": n,
            **{label: round(1000 * counts[(name, role, label)] / n, 1) for label in LABELS},
        }
    return {"per_1000_turns": sides,
            "rules_us_per_turn": {"median": round(statistics.median(per_turn_us), 1),
                                  "p95": round(sorted(per_turn_us)[int(0.95 * len(per_turn_us))],
                                               1)}}  # fmt: skip


#: What ``remember_cost`` compares: distillation off, the model-free rules, and the rules with
#: a model configured (each turn then also marks its session as waiting for the model; the
#: model itself is never reached here: no daemon runs, and sending happens in its worker).
CONFIGS = ("off", "on", "model")
#: A model on a port nothing listens on: what matters is that one is configured.
MODEL_TOML = '[[model]]\nkind = "ollama"\nurl = "http://127.0.0.1:9"\nmodel = "none"\n'


def remember_cost(all_turns: list[tuple[str, str, str]], n: int) -> dict:
    rng = random.Random(22)
    chosen = rng.sample([t for t in all_turns if t[0] == "lme" and 10 <= len(t[2]) <= 4000], n)
    out = {}
    for config in CONFIGS * 2:  # twice each, in turn: warm caches alike
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(home=Path(tmp) / "h", distill=config != "off")
            if config == "model":
                settings.home.mkdir(parents=True)
                (settings.home / "distill.toml").write_text(MODEL_TOML)
            with Chitta.open(settings, through_daemon=False) as chitta:
                times, stored = [], 0
                for i, (_, role, text) in enumerate(chosen):
                    t = time.perf_counter()
                    done = chitta.remember(
                        text,
                        kind="episode",
                        realm="bench",
                        source=Source(session=f"s{i // 10}", role=role),
                    )
                    times.append((time.perf_counter() - t) * 1000)
                    stored += len(done.distilled)
        times.sort()
        out[config] = {
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(0.95 * len(times))], 2),
            "fragments": stored,
        }
    return {"turns": n, **out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--turns", type=int, default=400)
    args = parser.parse_args()
    started = time.time()
    all_turns = turns()
    record = {
        "benchmark": "distill",
        "commit": environment.git_commit(),
        "machine": {**environment.machine(), "loadavg": environment.loadavg()},
        "precision": {name: precision(name) for name in SAMPLES},
        "picks": picks(all_turns),
        "remember": remember_cost(all_turns, args.turns),
    }
    record["wall_s"] = round(time.time() - started, 1)
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: record[k] for k in ("precision", "picks", "remember")}, indent=1))


if __name__ == "__main__":
    main()
