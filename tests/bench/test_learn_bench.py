"""`chitta bench learn` on a small LongMemEval-format file: simulated feedback on the tuning
half, the held-out half measured at each checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.bench.conftest import _PEOPLE

from chitta.bench import learn as bl
from chitta.bench import locomo
from chitta.config import EmbedSettings
from chitta.embed.loader import build_embedder

#: One question a conversation (LongMemEval's shape), its gold the turn of that index.
ASKED = {"conv-a": ("What pet did {a} adopt last spring?", 0),
         "conv-b": ("Which instrument is {a} learning?", 0),
         "conv-c": ("How long did {a}'s first marathon take?", 0),
         "conv-d": ("What did {a} buy for the summer lakes?", 0)}  # fmt: skip


def _dataset(path: Path) -> Path:
    items = []
    for sid, (a, b, lines) in _PEOPLE.items():
        question, gold = ASKED[sid]
        turns = [{"speaker": a if i % 2 == 0 else b, "dia_id": f"D1:{i + 1}", "text": text}
                 for i, text in enumerate(lines)]  # fmt: skip
        items.append({
            "sample_id": sid,
            "conversation": {"speaker_a": a, "speaker_b": b,
                             "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns},
            "qa": [{"question": question.format(a=a), "answer": "x",
                    "evidence": [f"D1:{gold + 1}"], "category": 1,
                    "question_type": "single-session-user",
                    "question_date": "2023/05/30 (Tue) 03:16"}],
        })  # fmt: skip
    path.write_text(json.dumps(items))
    return path


def test_the_run_counts_its_events_and_measures_each_checkpoint(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "tiny.json")
    assert len(locomo.load(data, select="tune").conversations) == 2
    embedder = build_embedder(EmbedSettings()).inner
    run = bl.run_learning(data, tmp_path / "h", embedder, checkpoints=(0, 4, 9), seed=3)
    assert [row["events"] for row in run["checkpoints"]] == [0, 4, 9]
    assert run["events"] == 9 and run["flipped"] == 0
    assert run["training_questions"] == 2 and run["held_out_questions"] == 2
    for row in run["checkpoints"]:
        assert 0 <= row["recall@10"] <= 1 and 0 <= row["ndcg@10"] <= 1
        assert 0 <= row["drawn"]["ndcg@10"] <= 1
    assert "balance" in run["learned"]  # learned from the feedback, shown against the preset
    assert run["learned"]["balance"]["preset"] == 0.5
    wrong = bl.run_learning(data, tmp_path / "h2", embedder, checkpoints=(0, 30), wrong=0.5,
                            seed=3)  # fmt: skip
    assert 0 < wrong["flipped"] < 30
    # Checkpoint 0 is the fixed preset, the same whatever the feedback to come.
    assert wrong["checkpoints"][0] == run["checkpoints"][0]


def _bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return subprocess.run([sys.executable, "-m", "chitta", "bench", "learn", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**env, "CHITTA_HOME": str(tmp_path / "h")})  # fmt: skip


def test_the_command_writes_its_results_and_table(tmp_path: Path) -> None:
    out = tmp_path / "learn.json"
    done = _bench(tmp_path, "--data", str(_dataset(tmp_path / "tiny.json")), "--events", "0,5",
                  "--wrong", "0,0.2", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["benchmark"] == "learn" and len(record["runs"]) == 2
    assert [r["wrong"] for r in record["runs"]] == [0.0, 0.2]
    table = out.with_suffix(".md").read_text()
    assert "| tiny.json | 20 % | 5 |" in table


@pytest.mark.parametrize(
    ("args", "said"),
    [(["--events", "5,10"], "include 0"), (["--wrong", "1.5"], "between 0 and 1"),
     (["--events", "x"], "comma-separated numbers"), (["--data", "/nowhere.json"], "no data")],
)  # fmt: skip
def test_bad_options_are_clear_errors(tmp_path: Path, args: list[str], said: str) -> None:
    done = _bench(tmp_path, *args, "--out", str(tmp_path / "o.json"))
    assert done.returncode != 0 and said in done.stderr
    assert "Traceback" not in done.stderr
