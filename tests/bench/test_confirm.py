"""`chitta bench confirm` on a small LoCoMo-format file the test writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

LINES = [
    "I adopted a grey greyhound called Pepper last spring",
    "My pottery class meets every Tuesday at the community hall",
    "We hiked the Dolomites in August and the weather held",
    "I switched jobs and now work as a marine biologist",
    "The sourdough starter finally doubled after a week",
    "My sister visits from Lisbon next month for the festival",
]
QUESTIONS = [
    ("What dog did Aurelio adopt?", ["D1:1"], 4),
    ("When does the pottery class meet?", ["D1:2"], 2),
    ("Where did they hike, and who visits from Lisbon?", ["D1:3", "D1:6"], 1),
]


def _dataset(path: Path) -> Path:
    turns = [{"speaker": "Aurelio" if i % 2 == 0 else "Brigitta", "dia_id": f"D1:{i + 1}",
              "text": text} for i, text in enumerate(LINES)]  # fmt: skip
    qa = [{"question": q, "answer": "x", "evidence": gold, "category": cat}
          for q, gold, cat in QUESTIONS]  # fmt: skip
    path.write_text(json.dumps([{"sample_id": "conv-a", "qa": qa, "conversation": {
        "speaker_a": "Aurelio", "speaker_b": "Brigitta",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}]))  # fmt: skip
    return path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return subprocess.run([sys.executable, "-m", "chitta", "bench", "confirm", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**env, "CHITTA_HOME": str(tmp_path / "h")})  # fmt: skip


def test_confirm_codes_every_question_and_replays_saved_traces(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "tiny.json")
    out, traces = tmp_path / "confirm.json", tmp_path / "traces.jsonl"
    done = _run(tmp_path, "--data", str(data), "--limit", "1", "--out", str(out),
                "--save-traces", str(traces))  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert sum(record["codes"]["all"].values()) == 3
    # At a count of one, the two-gold question cannot have both returned.
    two = next(q for q in record["questions"] if len(q["gold"]) == 2)
    assert two["code"] in ("RANKING_MISS", "CANDIDATE_MISS", "FILTER_DROP")
    cost = record["trace_cost"]
    assert cost["n"] == 3 and cost["trace_build_ms_p50"] > 0 and cost["share_of_recall"] > 0
    assert "| all | 3 |" in out.with_suffix(".md").read_text()
    assert len(traces.read_text().splitlines()) == 3
    again = tmp_path / "again.json"
    replay = _run(tmp_path, "--from-traces", str(traces), "--out", str(again))
    assert replay.returncode == 0, replay.stderr
    replayed = json.loads(again.read_text())
    assert replayed["codes"] == record["codes"] and replayed["trace_cost"] is None


def test_a_file_that_is_not_saved_traces_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trace": 1}\n')
    done = _run(tmp_path, "--from-traces", str(bad), "--out", str(tmp_path / "o.json"))
    assert done.returncode == 2 and "bad.jsonl line 1 is not a saved trace" in done.stderr
    bad.write_text('{"trace": {}, "gold_refs": ["x"], "category": 1}\n')
    done = _run(tmp_path, "--from-traces", str(bad), "--out", str(tmp_path / "o.json"))
    assert done.returncode == 2 and "lacks the field 'arms'" in done.stderr
    done = _run(tmp_path, "--data", str(_dataset(tmp_path / "t.json")), "--save-traces",
                str(tmp_path / "no" / "such" / "dir" / "t.jsonl"))  # fmt: skip
    assert done.returncode == 2 and "cannot write the traces" in done.stderr
