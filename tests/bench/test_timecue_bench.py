"""`chitta bench timecue` on a small LoCoMo-format file with dated sessions."""

import json
import os
import subprocess
import sys
from pathlib import Path

SESSIONS = {
    "1:56 pm on 8 May, 2023": ["I adopted a grey greyhound called Pepper",
                               "Our pottery class met at the community hall"],
    "10:00 am on 13 October, 2023": ["We hiked the Dolomites and the weather held",
                                     "I started a new job as a marine biologist"],
}  # fmt: skip
QUESTIONS = [
    ("What did Aurelio adopt in May 2023?", ["D1:1"]),
    ("What did they hike on 13 October, 2023?", ["D2:1"]),
    ("What job did Brigitta start?", ["D2:2"]),  # names no time: not asked
]


def _dataset(path: Path) -> Path:
    conversation = {"speaker_a": "Aurelio", "speaker_b": "Brigitta"}
    for number, (when, lines) in enumerate(SESSIONS.items(), start=1):
        conversation[f"session_{number}_date_time"] = when
        conversation[f"session_{number}"] = [
            {"speaker": "Aurelio" if i % 2 == 0 else "Brigitta", "dia_id": f"D{number}:{i + 1}",
             "text": text} for i, text in enumerate(lines)]  # fmt: skip
    qa = [{"question": q, "answer": "x", "evidence": gold, "category": 4} for q, gold in QUESTIONS]
    path.write_text(json.dumps([{"sample_id": "conv-a", "qa": qa, "conversation": conversation}]))
    return path


def test_timecue_measures_the_cued_questions_with_right_and_wrong_cues(tmp_path: Path) -> None:
    out = tmp_path / "timecue.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    done = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "timecue", "--data",
         str(_dataset(tmp_path / "tiny.json")), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
        env={**env, "CHITTA_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["questions"] == 2
    assert [r["confidence"] for r in record["rows"]] == ["likely", "sure"]
    for name in ("right", "wrong"):
        summary = record[name]
        assert summary["n"] == 2 and summary["up"] + summary["down"] <= 2
        assert 0 <= summary["ndcg_plain"] <= 1 and 0 <= summary["ndcg_cued"] <= 1
    assert "| right |" in out.with_suffix(".md").read_text()
