"""`chitta bench agent-day`: the hook-output parser in both formats, and a --smoke run's shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chitta.bench.agent_day_output import Ledger, parse_hook_output, recorded_ids
from chitta.bench.environment import default_locomo

A, B = "01JD0000000000000000000001", "01JD0000000000000000000002"
DATA = default_locomo().with_name("longmemeval_s_dev60.json")


def test_plain_lines_are_all_context() -> None:
    out = parse_hook_output(f"[chitta] KNOWN\n[hyb] {A} episode: user: mugs\n[sem] {B} x: y\n")
    assert out.ids == (A, B) and out.notice == "" and out.context.startswith("[chitta] KNOWN")
    assert out.tokens == len(out.context) / 4


def test_claude_code_json_keeps_only_additional_context() -> None:
    stdout = json.dumps({
        "systemMessage": f"chitta: 1 memory ({B} is only in the notice)",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                               "additionalContext": f"- episode, 2 days ago, id {A}: mugs"},
    })  # fmt: skip
    out = parse_hook_output(stdout)
    assert out.ids == (A,) and B in out.notice and "{" not in out.context
    assert parse_hook_output(json.dumps({"continue": True})).context == ""
    assert parse_hook_output("{not json").context == "{not json"  # plain text after all


def test_the_ledger_counts_repeats_self_echo_and_gold() -> None:
    ledger = Ledger()
    assert recorded_ids(f"recorded the turn as episode {A} in realm r") == [(None, A)]
    both = f"recorded the turn as episodes user {A}, assistant {B} in realm r"
    assert recorded_ids("", both) == [("user", A), ("assistant", B)]
    ledger.record(A, "s1", ("D1:1", "D1:2"), "I bought twelve dollar mugs for my coworkers")
    ledger.record(None, "s1", ("D1:3", "D1:4"), "My sister is visiting from Lisbon next month")
    text = (
        f"[hyb] {A} episode: user: ...\n[kw] x: user: My sister is visiting from Lisbon next month"
    )
    refs = ledger.injected(parse_hook_output(text))
    assert refs == [A, "turn:D1:3"]
    assert ledger.show("s1", refs) == (0, 2)  # both recorded by s1 itself
    assert ledger.show("s1", refs) == (2, 2)
    assert ledger.show("s2", refs) == (0, 0)
    assert ledger.gold_hits(refs, ("D1:2", "D9:9")) == ["D1:2"]


@pytest.mark.skipif(not DATA.is_file(), reason="needs ../shared/data/longmemeval_s_dev60.json")
def test_a_smoke_run_writes_the_figures(tmp_path: Path) -> None:
    out = tmp_path / "agent-day.json"
    argv = [sys.executable, "-m", "chitta", "bench", "agent-day", "--smoke", "--out", str(out),
            "--workdir", str(tmp_path / "work")]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=os.environ)
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["benchmark"] == "agent-day" and record["settings"]["smoke"] is True
    assert "CHITTA_CLOCK_OFFSET_MS" in record["settings"]["clock"]
    # The question was asked at its own date (plus the seconds the replay took), not today.
    (row,) = record["questions"]
    asked = datetime.fromisoformat(row["now"].replace("Z", "+00:00"))
    assert asked.year < datetime.now(UTC).year - 1, row["now"]
    overall = record["overall"]
    assert overall["questions"] == 1 == len(record["questions"])
    assert overall["sessions"] == 3 and overall["prompts"] == 5  # 2 sessions of 2, the question
    assert overall["gold_stored_rate"] == 1.0 and 0.0 <= overall["hit_rate"] <= 1.0
    assert overall["stop_hooks_without_id"] == 0
    for key in ("prompt_tokens", "session_tokens", "question_tokens"):
        assert overall[key]["p95"] >= overall[key]["p50"] > 0
    assert {"session-start", "prompt", "stop"} == set(record["hook_wall_ms"])
    assert (
        record["hook_wall_ms"]["stop"]["runs"] == 4 and record["hook_wall_ms"]["prompt"]["p50"] > 0
    )
    # Two turns, each stored as two episodes (the user's side and the assistant's).
    assert record["store"]["memories"] == 8 and record["store"]["bytes"] > 0
    (qtype,) = record["per_type"]
    assert set(record["per_type"][qtype]) >= {"hit_rate", "repeats", "self_echo", "injections"}
    assert "| **overall** | 1 |" in out.with_suffix(".md").read_text()
    assert not (tmp_path / "work" / "home" / "chitta.sock").exists()  # the daemon stopped
