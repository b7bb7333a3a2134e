"""Draw the frozen sample the model-free distiller is measured on (issue 22, part 1).

    python benchmarks/distill_sample.py benchmarks/distill/sample.jsonl
    python benchmarks/distill_sample.py benchmarks/distill/heldout.jsonl --seed 23 \
        --cued 30 --any 20 --exclude benchmarks/distill/sample.jsonl
    python benchmarks/distill_sample.py benchmarks/distill/fresh.jsonl --seed 24 \
        --cued 30 --any 20 --exclude benchmarks/distill/sample.jsonl \
        --exclude benchmarks/distill/heldout.jsonl

Written before the extractor's rules, and not to be drawn again: the sentences are then
labelled by hand (``label``: correction, preference, decision, failure_fix or none; the
definitions are in docs/distill.md) and the rules are measured against the labels.

The sentences come from the development sets' turns (``../shared/data``), split at sentence
ends and line breaks, 20-300 characters: LongMemEval's user turns, its assistant turns, and
LoCoMo's (two people talking; each side is a "user"). From each of the three, with a fixed
seed, 40 sentences among those holding a cue word (below: a sentence with none is seldom
anything but ``none``, and a uniform draw would hold too few of the others to measure
precision on) and 30 from all of them.

The second sample (``heldout.jsonl``: seed 23, 30 and 20 from each, none of the first's) was
drawn and labelled after the rules were written, before they were run on it: the first
sample's author had read it while writing them, the second's sentences were new to both.
Its errors then changed the rules (docs/distill.md says how), so a third (``fresh.jsonl``,
seed 24) was drawn and labelled before the changed rules were run on it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 22
CUED, ANY = 40, 30
#: The cue words of the sampling frame (fixed before any rule was written).
CUES = re.compile(
    r"\b(prefer\w*|always|never|don't|do not|instead|rather|actually|because|decid\w*|chose|"
    r"choose|went with|fix\w*|error|fail\w*|broke\w*|wrong|should|avoid|hate|favou?rite|"
    r"love|no,|not)\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    parts = (p.strip().lstrip("-*#> ").strip() for p in _SPLIT.split(text))
    return [p for p in parts if 20 <= len(p) <= 300]


def units() -> dict[str, list[dict]]:
    """Every sentence of the development sets, by source."""
    out: dict[str, list[dict]] = {"lme-user": [], "lme-assistant": [], "locomo": []}
    for name, path in (("lme", "longmemeval_s_dev60.json"), ("locomo", "locomo10.json")):
        for item in json.loads((DATA / path).read_text(encoding="utf-8")):
            conv = item["conversation"]
            for key, turns in conv.items():
                if not key.startswith("session_") or key.endswith("date_time"):
                    continue
                for turn in turns:
                    role = turn["speaker"] if name == "lme" else "user"
                    where = "locomo" if name == "locomo" else f"lme-{role}"
                    for i, text in enumerate(sentences(turn.get("text", ""))):
                        out[where].append({"source": where, "conversation": item["sample_id"],
                                           "turn": turn["dia_id"], "sentence": i,
                                           "role": role, "text": text})  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--cued", type=int, default=CUED)
    parser.add_argument("--any", type=int, default=ANY)
    parser.add_argument("--exclude", type=Path, action="append", default=[])
    args = parser.parse_args()
    rng = random.Random(args.seed)
    drawn: list[dict] = []
    seen: set[str] = set()
    for path in args.exclude:  # an earlier sample's sentences are not drawn again
        seen |= {json.loads(line)["text"] for line in path.read_text().splitlines()}
    for pool in units().values():
        pool = [u for u in pool if not (u["text"] in seen or seen.add(u["text"]))]
        cued = [u for u in pool if CUES.search(u["text"])]
        picked = rng.sample(cued, args.cued)
        rest = [u for u in pool if u not in picked]
        drawn += [{**u, "drawn": "cued"} for u in picked]
        drawn += [{**u, "drawn": "any"} for u in rng.sample(rest, args.any)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for n, u in enumerate(drawn):
            fh.write(json.dumps({"n": n, **u, "label": None}) + "\n")


if __name__ == "__main__":
    main()
