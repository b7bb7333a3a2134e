"""The PostToolUse entry `chitta setup claude` writes: chitta's post-edit hook for the tools
that change a file, once, beside the user's own PostToolUse hooks; and the event the hook
reads its file from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chitta.hooks.install import merge_hooks, remove_hooks
from chitta.hooks.post_edit import edited_file

THEIRS = {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier-it"}]}


def test_the_entry_carries_the_edit_tools_matcher_and_is_written_once() -> None:
    settings, changed = merge_hooks({"hooks": {"PostToolUse": [THEIRS]}}, "/abs/chitta")
    assert changed["PostToolUse"] == "added"
    assert settings["hooks"]["PostToolUse"] == [THEIRS, {
        "matcher": "Edit|Write|MultiEdit",
        "hooks": [{"type": "command", "command": "/abs/chitta hook post-edit", "timeout": 10}],
    }]  # fmt: skip
    again, changed = merge_hooks(settings, "/abs/chitta")
    assert changed == {} and again == settings
    moved, changed = merge_hooks(settings, "/new/chitta")
    assert changed["PostToolUse"] == "replaced"
    assert [g.get("matcher") for g in moved["hooks"]["PostToolUse"]] == [
        "Write", "Edit|Write|MultiEdit"]  # fmt: skip
    gone, removed = remove_hooks(moved)
    assert "PostToolUse" in removed and gone["hooks"]["PostToolUse"] == [THEIRS]


def test_setup_claude_writes_it_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["HOME"] = str(tmp_path)

    def setup() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chitta", "setup", "claude"], cwd=tmp_path,
                              capture_output=True, text=True, env=env, timeout=120)  # fmt: skip

    first = setup()
    assert first.returncode == 0 and "added PostToolUse" in first.stdout, first.stderr
    written = (tmp_path / ".claude" / "settings.json").read_text()
    (group,) = json.loads(written)["hooks"]["PostToolUse"]
    assert group["matcher"] == "Edit|Write|MultiEdit"
    assert group["hooks"][0]["command"].endswith(" hook post-edit")
    second = setup()
    assert "already set up; nothing changed" in second.stdout.splitlines()[0]
    assert (tmp_path / ".claude" / "settings.json").read_text() == written


def test_the_edited_file_comes_from_the_tool_input_else_its_response() -> None:
    assert edited_file({"tool_input": {"file_path": "/r/a.py"}}) == "/r/a.py"
    assert edited_file({"tool_input": {}, "tool_response": {"filePath": "/r/b.py"}}) == "/r/b.py"
    assert edited_file({"cwd": "/r", "tool_input": {"file_path": "c/d.py"}}) == "/r/c/d.py"
    for event in (
        {},
        {"tool_input": {"command": "ls"}},
        {"tool_input": {"file_path": 3}},
        {"tool_input": {"file_path": "rel.py"}},
        {"tool_input": "x"},
    ):
        assert edited_file(event) is None
