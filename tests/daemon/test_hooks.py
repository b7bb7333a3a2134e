"""`chitta hook …` against a real daemon: context output, the budget, and never failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from chitta.daemon.client import DaemonClient

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"
DEPLOY = "Never run deploy.sh on Fridays; use the staging pipeline instead"
HEAVY = ("numpy", "onnxruntime", "chitta.store.sqlite")

Hook = Callable[..., subprocess.CompletedProcess]


def _env(home: Path, **extra: str) -> dict[str, str]:
    # os.environ carries PYTHONPATH, so the subprocess runs this worktree's code.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(home), "CHITTA_HOOK_REALM": "demo", **extra}


@pytest.fixture
def hook(home: Path) -> Hook:
    """Run ``chitta hook NAME`` with ``stdin`` (a dict is sent as JSON) and extra env."""

    def run(name: str, stdin: object, **extra: str) -> subprocess.CompletedProcess:
        text = stdin if isinstance(stdin, str) else json.dumps(stdin)
        return subprocess.run([sys.executable, "-m", "chitta", "hook", name], input=text,
                              capture_output=True, text=True, env=_env(home, **extra),
                              timeout=120)  # fmt: skip

    return run


@pytest.fixture
def stored(daemon: Path) -> dict[str, str]:
    """A running daemon holding a wisdom and a correction in realm demo; their ids."""
    with DaemonClient(daemon) as client:
        wal = client.call("remember", content=WAL, realm="demo", kind="wisdom")["id"]
        fix = client.call("remember", content=DEPLOY, realm="demo", kind="correction")["id"]
    return {"wal": wal, "deploy": fix}


def test_prompt_hook_prints_lane_tagged_memories_and_one_summary(stored, hook) -> None:
    done = hook("prompt", {"prompt": "why SQLite WAL, and can I run deploy.sh?",
                           "session_id": "s1", "cwd": "/nowhere"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert f"[hyb] {stored['wal']} wisdom: {WAL}" in lines
    assert f"[corr] {stored['deploy']} correction (key deploy.sh): {DEPLOY}" in lines
    summary = lines[-1]
    assert summary.startswith("[chitta] realm demo: ")
    assert "corr 1, hyb " in summary and "ctx " in summary and "xr " in summary
    # The band first, in words; then the memories; then the summary.
    assert lines[0].startswith("[chitta] KNOWN (") and "verify them" in lines[0]
    assert sum(line.startswith("[chitta]") for line in lines) == 2
    ids = [line.split()[1] for line in lines[1:-1]]
    assert len(ids) == len(set(ids))  # each memory once, under its first lane


def test_a_budget_below_one_lane_drops_and_counts_the_lanes(stored, hook) -> None:
    done = hook("prompt", {"prompt": "why SQLite WAL?", "session_id": "s1"},
                CHITTA_HOOK_BUDGET_MS="1")  # fmt: skip
    assert done.returncode == 0
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    assert "0 memories admitted" in lines[0]
    assert "timeout 6 (corr, hyb, ctx, sem, kw, xr)" in lines[0]


def one_line_on_stderr(done: subprocess.CompletedProcess, hook: str) -> str:
    """The bad-input rule: exit 0, nothing in the model's context, one line on stderr."""
    assert done.returncode == 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"[chitta] {hook}: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("stdin", ["{not json", "[1, 2]", "", '{"session_id": "s1"}'])
def test_malformed_input_is_one_line_and_exit_0(stored, hook, stdin: str) -> None:
    one_line_on_stderr(hook("prompt", stdin), "prompt")


@pytest.mark.parametrize("name", ["prompt", "session-start", "stop"])
def test_oversized_input_is_one_line_and_exit_0(stored, hook, name: str) -> None:
    event = json.dumps({"session_id": "s1", "prompt": "x" * (5 << 20)})
    assert "over 4 MiB" in one_line_on_stderr(hook(name, event), name)


@pytest.mark.parametrize("name", ["prompt", "session-start"])
def test_a_missing_session_id_shows_nothing(stored, hook, name: str) -> None:
    line = one_line_on_stderr(hook(name, {"prompt": "why SQLite WAL?", "source": "startup"}), name)
    assert "session_id" in line


def test_an_unknown_source_shows_nothing(stored, hook) -> None:
    done = hook("session-start", {"session_id": "s1", "source": "teleport"})
    assert "unknown SessionStart source 'teleport'" in one_line_on_stderr(done, "session-start")


@pytest.mark.parametrize("where", ["missing", "folder"])
def test_a_transcript_that_cannot_be_read_is_one_line(
    stored, hook, tmp_path: Path, where: str
) -> None:
    path = tmp_path / "nope.jsonl"
    if where == "folder":
        path.mkdir()
    done = hook("stop", {"session_id": "s1", "transcript_path": str(path)})
    assert "nothing recorded" in one_line_on_stderr(done, "stop")


def test_unexpected_fields_and_types_are_one_line(stored, hook) -> None:
    done = hook("prompt", {"session_id": "s1", "prompt": ["not", "text"], "cwd": 7})
    assert "no 'prompt' text" in one_line_on_stderr(done, "prompt")


def test_bad_settings_do_not_fail_the_prompt(home: Path, hook) -> None:
    done = hook("prompt", {"prompt": "x", "session_id": "s1"}, CHITTA_HOOK_BUDGET_MS="soon",
                CHITTA_STORE="../x")  # fmt: skip
    one_line_on_stderr(done, "prompt")


def test_session_start_lists_the_realms_corrections(stored, hook) -> None:
    done = hook("session-start", {"session_id": "s1", "source": "startup"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert any(stored["deploy"] in line and DEPLOY in line for line in lines[:-1])
    assert stored["wal"] not in done.stdout  # a wisdom is not a standing correction
    assert "standing corrections and preferences" in lines[-1]


def test_stop_records_the_turn_as_an_episode(daemon: Path, hook, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    events = [
        {"type": "user", "message": {"role": "user", "content": "an earlier question"}},
        {"type": "user", "message": {"role": "user", "content": "How do we recover from a crash?"}},
        {"type": "assistant", "message": {"content": [
            {"type": "text", "text": "SQLite WAL replays the log on open."},
            {"type": "tool_use", "name": "Read", "input": {}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = hook("stop", {"session_id": "s9", "transcript_path": str(transcript)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # a Stop hook's output is not context: what it did is on stderr
    assert "recorded the turn as episode" in one_line_on_stderr(done, "stop")
    with DaemonClient(daemon) as client:
        hits = client.call("recall", query="recover from a crash", realm="demo")["hits"]
    episode = next(h for h in hits if h["kind"] == "episode")
    assert episode["content"] == (
        "user: How do we recover from a crash?\n"
        "assistant: SQLite WAL replays the log on open.\nDone."
    )
    assert episode["source"]["session"] == "s9"


def test_the_hook_path_imports_no_numpy_onnxruntime_or_store(stored, home: Path) -> None:
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules]))\n"
        "from chitta.cli import main\n"
        "sys.argv = ['chitta', 'hook', 'prompt']\n"
        "main()\n"
    )
    event = json.dumps({"prompt": "WAL?", "session_id": "s1"})
    done = subprocess.run([sys.executable, "-c", probe], input=event,
                          capture_output=True, text=True, env=_env(home), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[hyb] " in done.stdout  # the whole path ran
    assert "HEAVY []" in done.stdout


def test_stop_without_a_session_id_still_records_the_turn(daemon: Path, hook, tmp_path) -> None:
    transcript = tmp_path / "t.jsonl"
    events = [
        {"type": "user", "message": {"content": "Which port does the API listen on?"}},
        {"type": "assistant", "message": {"content": "Port 8443, behind the proxy."}},
    ]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events))
    line = one_line_on_stderr(hook("stop", {"transcript_path": str(transcript)}), "stop")
    assert "recorded the turn" in line and "no 'session_id'" in line
    with DaemonClient(daemon) as client:
        hits = client.call("recall", query="which port API", realm="demo")["hits"]
    assert any(h["kind"] == "episode" and "8443" in h["content"] for h in hits)
