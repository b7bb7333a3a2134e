"""Reading the last turn from the end of a Claude Code transcript."""

from __future__ import annotations

import json
from pathlib import Path

from chitta.hooks.transcript import Turn, last_turn


def _write(path: Path, events: list[object]) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return path


def test_the_last_prompt_and_every_reply_text_after_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [
        {"type": "user", "message": {"content": "old prompt"}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "old reply"}]}},
        {"type": "user", "message": {"content": [{"type": "text", "text": "new prompt"}]}},
        "{broken line",
        {"type": "summary", "summary": "ignored"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "part one"}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "part two"}]}},
    ])  # fmt: skip
    assert last_turn(path) == Turn(prompt="new prompt", reply="part one\npart two")


def test_the_read_is_bounded_to_the_tail(tmp_path: Path) -> None:
    big = "x" * 5000
    path = _write(tmp_path / "t.jsonl", [
        {"type": "user", "message": {"content": "far back"}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": big}]}},
    ])  # fmt: skip
    assert last_turn(path, limit=1000) is None
    assert last_turn(path, limit=10_000) == Turn(prompt="far back", reply=big)


def test_the_prompt_line_timestamp_is_the_turn_time(tmp_path: Path) -> None:
    at = "2023-05-20T15:08:00.000Z"
    path = _write(tmp_path / "t.jsonl", [
        {"type": "user", "timestamp": at, "message": {"content": "a prompt"}},
        {"type": "assistant", "timestamp": "2023-05-20T15:09:00.000Z",
         "message": {"content": [{"type": "text", "text": "a reply"}]}},
    ])  # fmt: skip
    assert last_turn(path) == Turn(prompt="a prompt", reply="a reply", at=at)
