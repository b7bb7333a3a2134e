"""The abstention benchmark on a small LoCoMo-format file the test writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

from chitta.bench.abstain import build_set, names_in
from chitta.bench.locomo import Question, load

QUESTIONS = {
    "conv-a": [
        "What dog did {a} adopt?",
        "When does {b}'s pottery class meet?",
        "Where did {a} hike in August?",
        "What is {b}'s new job?",
        "What happened to {a}'s sourdough starter?",
        "Who visits {b} from Lisbon?",
    ],
    "conv-b": [
        "What instrument is {a} learning?",
        "What did {b}'s team win?",
        "What did {a} plant on the balcony?",
        "What does {b}'s motorcycle need?",
        "Where does {a} volunteer?",
        "Where are {b} and family going in autumn?",
    ],
    "conv-c": [
        "What race did {a} finish?",
        "What closed after thirty years near {b}?",
        "What is {a} knitting?",
        "What is {b}'s book club reading?",
        "What did {a} repair before the storm?",
        "What did {b}'s daughter learn?",
    ],
    "conv-d": [
        "What did {a} buy for the summer?",
        "Where does {b}'s choir sing?",
        "What is {a} restoring?",
        "Where did {b}'s nephew start university?",
        "What are {a}'s cats called?",
        "What did {b}'s orchard produce?",
    ],
}


def test_unanswerable_questions_name_only_what_the_store_never_saw(
    tiny_locomo, tmp_path: Path
) -> None:
    dataset = load(tiny_locomo.write(tmp_path / "tiny.json", QUESTIONS))
    words = {
        f"locomo-{sid}": {w.lower() for line in lines for w in line.split()}
        | {a.lower(), b.lower()}
        for sid, (a, b, lines) in tiny_locomo.people.items()
    }
    items = build_set(dataset, lambda realm, w: int(w in words[realm]), per_store=4)
    own = [i for i in items if i.answerable]
    others = [i for i in items if not i.answerable]
    assert len(own) == 24 and len(others) == 16  # 4 of the 18 eligible, per store
    for item in others:
        assert item.question.conversation != item.realm.removeprefix("locomo-")
        assert not (names_in(item.question, {}) & words[item.realm])
    # In groups, a store's unanswerable questions come from its own group only.
    grouped = build_set(dataset, lambda realm, w: int(w in words[realm]), per_store=10,
                        groups=[{"conv-a", "conv-b"}, {"conv-c", "conv-d"}])  # fmt: skip
    pairs = {(i.realm, i.question.conversation) for i in grouped if not i.answerable}
    assert pairs == {("locomo-conv-a", "conv-b"), ("locomo-conv-b", "conv-a"),
                     ("locomo-conv-c", "conv-d"), ("locomo-conv-d", "conv-c")}  # fmt: skip
    q = Question("conv-a", 0, "Did Aurelio meet Brigitta in Lisbon?", 4, ("D1:1",))
    assert names_in(q, {"D1:1": "Aurelio"}) == {"aurelio", "brigitta", "lisbon"}


def test_the_command_fits_on_some_conversations_and_measures_on_the_others(
    tiny_locomo,
    tmp_path: Path,
) -> None:
    data = tiny_locomo.write(tmp_path / "tiny.json", QUESTIONS)
    out = tmp_path / "abstain.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chitta",
            "bench",
            "abstain",
            "--data",
            str(data),
            "--fit-on",
            "conv-a,conv-b",
            "--per-store",
            "6",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**env, "CHITTA_HOME": str(tmp_path / "h")},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert record["fit_on"] == ["conv-a", "conv-b"]
    # Held out: the two stores' own 12 and 12 of the others', and a small store per own
    # question (its gold turns and a few others), asked it and one unanswerable question.
    held = record["held_out"]
    assert held["questions"] == {"answerable": 24, "unanswerable": 24}
    parts = record["sets"]["tiny"]
    assert parts["stores"]["fitted"]["questions"] == {"answerable": 12, "unanswerable": 12}
    assert parts["small stores"]["fitted"]["questions"] == {"answerable": 12, "unanswerable": 12}
    small = [p for p in record["pairs"] if p["small"]]
    assert small and all(1 <= p["size"] <= 5 for p in small)
    assert all(p["size"] > 5 for p in record["pairs"] if not p["small"])
    assert 0.5 <= held["auroc"] <= 1.0
    assert set(held["bands"]) == set(held["bands_answerable"]) == {"KNOWN", "UNKNOWN"}
    assert {"raw", "hit3", "answerable", "size"} <= set(record["pairs"][0])
    assert "| held-out, fitted calibration | 24 / 24 |" in out.with_suffix(".md").read_text()
    # Held out alone, conv-d has nobody to borrow unanswerable questions from: the figures
    # cannot be made, the command says why, and the recalls are still written.
    lonely = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "abstain", "--data", str(data), "--fit-on",
         "conv-a,conv-b,conv-c", "--out", str(tmp_path / "lonely.json")],
        capture_output=True, text=True, env={**env, "CHITTA_HOME": str(tmp_path / "h2")},
        timeout=300,
    )  # fmt: skip
    assert lonely.returncode == 2 and "only one kind" in lonely.stderr
    assert json.loads((tmp_path / "lonely.json").read_text())["pairs"]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "chitta",
            "bench",
            "abstain",
            "--data",
            str(data),
            "--fit-on",
            "conv-z",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 2 and "conv-z" in bad.stderr
