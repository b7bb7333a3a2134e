"""The harness end to end on one conversation, as CI runs it, so it cannot silently rot."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.bench.environment import default_locomo


@pytest.mark.skipif(not default_locomo().is_file(), reason="needs ../shared/data/locomo10.json")
def test_smoke_run_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "locomo.json"
    proc = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "locomo", "--smoke", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert set(record["systems"]) == {"chitta:hybrid", "bm25"}
    assert record["data"]["conversations"] == 1
    assert record["settings"]["conversations"] == ["conv-26"]
    for figures in record["systems"].values():
        overall = figures["metrics"]["all"]
        # A working retriever finds far more than chance (about 10 / 419 turns at k = 10).
        assert overall["recall@10"] > 0.3
        assert figures["latency_ms"]["n"] == overall["n"] > 150
    rows = [json.loads(x) for x in out.with_suffix(".questions.jsonl").read_text().splitlines()]
    assert {r["system"] for r in rows} == {"chitta:hybrid", "bm25"}
    assert "| chitta:hybrid |" in out.with_suffix(".md").read_text()
    assert "D8:6; D9:17" in proc.stderr  # the repair is reported

    per_question = str(out.with_suffix(".questions.jsonl"))
    compared = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "compare", per_question, per_question,
         "--system", "bm25", "--against", "chitta:hybrid"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "| bm25 | chitta:hybrid |" in compared.stdout


def test_unknown_system_is_refused() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "locomo", "--systems", "chitta,psychic"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "unknown system 'psychic'" in proc.stderr


def _lme_file(path: Path, date: str) -> Path:
    """Two LongMemEval questions in LoCoMo's format (../shared/data/README.md)."""
    items = []
    for n, (kind, code) in enumerate([("single-session-user", 1), ("knowledge-update", 5)]):
        turns = [
            {"speaker": "user", "dia_id": "D1:1", "text": f"My bicycle number {n} is red"},
            {"speaker": "assistant", "dia_id": "D1:2", "text": "Lovely, enjoy the rides"},
        ]
        items.append({"sample_id": f"q{n}", "conversation": {
            "speaker_a": "user", "speaker_b": "assistant",
            "session_1_date_time": "3:08 pm on 20 May, 2023", "session_1": turns},
            "qa": [{"question": "What colour is my bicycle?", "answer": "red",
                    "evidence": ["D1:1"], "category": code, "question_type": kind,
                    "question_date": date}]})  # fmt: skip
    path.write_text(json.dumps(items))
    return path


def test_a_longmemeval_file_runs_under_its_own_names(tmp_path: Path) -> None:
    data = _lme_file(tmp_path / "lme.json", "2023/05/30 (Tue) 03:16")
    out = tmp_path / "lme-out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "locomo", "--data", str(data), "--systems",
         "bm25", "--conversations", "tune", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text())
    assert record["data"]["categories"]["dataset"] == "LongMemEval"
    assert record["settings"]["half"] == "tune"
    assert "### LongMemEval run" in proc.stdout and "knowledge-update (5)" in proc.stdout
    assert "MRR per category:" in proc.stdout and "1-4" not in proc.stdout

    _lme_file(data, "the thirtieth of May")
    bad = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "locomo", "--data", str(data), "--systems",
         "bm25", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "question 0 of q0" in bad.stderr and "the thirtieth of May" in bad.stderr
