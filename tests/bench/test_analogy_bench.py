"""`chitta bench analogy` on the frozen fixture, through a real daemon, and a small hub."""

import json
import os
import subprocess
import sys
from pathlib import Path

from chitta.bench.analogy import FIXTURE, run

ROOT = Path(__file__).resolve().parents[2]


def test_the_frozen_cases_score_and_the_socket_answers_as_in_process(tmp_path: Path) -> None:
    figures = run(tmp_path / "home", ROOT / FIXTURE, rounds=1, hub=1_000)
    assert (figures["positive"], figures["negative"]) == (36, 31)
    assert figures["hit@1"] == figures["hit@3"] == 36
    assert figures["correct_abstentions"] == 31 and figures["negative_answered"] == 0
    assert figures["unsupported_answers"] == 0
    assert figures["rpc_same_as_in_process"] is True
    assert figures["rpc_ms"]["p50"] > 0
    hub = figures["hub"]  # 1,000 edges from one node: more than the 250 an analogy reads
    assert hub["analogy_bounded"] and hub["analogy_answers"] == 10
    assert "graph" in hub["recall_bounded"]


def test_a_case_answered_wrongly_is_counted(tmp_path: Path) -> None:
    """The scoring can fail: a fixture whose expected answer is wrong scores a miss."""
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "store.json").write_text((ROOT / FIXTURE / "store.json").read_text())
    cases = json.loads((ROOT / FIXTURE / "cases.json").read_text())
    first = next(c for c in cases["cases"] if c["id"] == "p01")
    wrong = {**first, "expect": ["Portugal"], "best": ["Portugal"]}
    unknown = {
        "id": "n99",
        "a": "Paris",
        "b": "France",
        "c": "Madrid",
        "expect": "abstain",
        "reason": "c_no_edge",
        "as_of": None,
        "why": "it answers: a wrong negative",
    }
    (fixture / "cases.json").write_text(json.dumps({"cases": [wrong, unknown]}))
    figures = run(tmp_path / "home", fixture, rounds=1, hub=0)
    assert figures["hit@1"] == figures["hit@3"] == 0
    assert figures["correct_abstentions"] == 0 and figures["negative_answered"] == 1
    assert "hub" not in figures


def test_the_command_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "analogy.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    done = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "analogy", "--fixture", str(ROOT / FIXTURE),
         "--rounds", "1", "--hub", "0", "--out", str(out)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["benchmark"] == "analogy" and record["unsupported_answers"] == 0
    assert "| hit@1 | 36 / 36 |" in out.with_suffix(".md").read_text()
