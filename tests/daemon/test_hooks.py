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
from chitta.validate import parse_time

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"
DEPLOY = "Never run deploy.sh on Fridays; use the staging pipeline instead"
HEAVY = ("numpy", "onnxruntime", "chitta.store.sqlite")

Hook = Callable[..., subprocess.CompletedProcess]


def _env(home: Path, store: str | None = None, **extra: str) -> dict[str, str]:
    # os.environ carries PYTHONPATH, so the subprocess runs this worktree's code.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    chosen = {"CHITTA_STORE": store} if store else {}  # a database (conftest.py daemon_store)
    return {**env, "CHITTA_HOME": str(home), "CHITTA_HOOK_REALM": "demo", **chosen, **extra}


@pytest.fixture
def hook(home: Path, daemon_store: str | None) -> Hook:
    """Run ``chitta hook NAME`` with ``stdin`` (a dict is sent as JSON) and extra env, on the
    test's store."""

    def run(name: str, stdin: object, **extra: str) -> subprocess.CompletedProcess:
        text = stdin if isinstance(stdin, str) else json.dumps(stdin)
        return subprocess.run([sys.executable, "-m", "chitta", "hook", name], input=text,
                              capture_output=True, text=True,
                              env=_env(home, daemon_store, **extra), timeout=120)  # fmt: skip

    return run


@pytest.fixture
def stored(daemon: Path) -> dict[str, str]:
    """A running daemon holding a wisdom and a correction in realm demo; their ids."""
    with DaemonClient(daemon) as client:
        wal = client.call("remember", content=WAL, realm="demo", kind="wisdom")["id"]
        fix = client.call("remember", content=DEPLOY, realm="demo", kind="correction")["id"]
    return {"wal": wal, "deploy": fix}


def context(done: subprocess.CompletedProcess, event: str = "UserPromptSubmit") -> list[str]:
    """The context lines a hook's JSON output gives the model ([] when it printed nothing),
    checked against Claude Code's shape: one object, only keys it knows."""
    if not done.stdout.strip():
        return []
    out = json.loads(done.stdout)
    assert set(out) <= {"hookSpecificOutput", "systemMessage"}, out
    specific = out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}
    assert specific["hookEventName"] == event
    assert specific["additionalContext"].strip() and done.stdout.count("\n") == 1
    return specific["additionalContext"].splitlines()


def no_diagnostics(lines: list[str]) -> None:
    """None of the hook's diagnostics reaches the model."""
    text = "\n".join(lines)
    for word in ("[chitta]", "admitted", "dropped", "budget", " ms", "calibrat", "KNOWN",
                 "daemon", "verify", "say so", "[hyb]", "[corr]"):  # fmt: skip
        assert word not in text, (word, text)


def test_prompt_hook_answers_claude_codes_json_with_memories_as_facts(stored, hook) -> None:
    done = hook("prompt", {"prompt": "why SQLite WAL, and can I run deploy.sh?",
                           "session_id": "s1", "cwd": "/nowhere"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = context(done)
    assert lines[0] == ("Memories chitta recalled for this prompt (realm demo); "
                        "this store holds memories on this:")  # fmt: skip
    assert f"- wisdom, just now, id {stored['wal']}: {WAL}" in lines
    assert f"- correction, keys deploy.sh, just now, id {stored['deploy']}: {DEPLOY}" in lines
    ids = [line.rsplit("id ", 1)[1].split(":")[0] for line in lines[1:]]
    assert len(ids) == len(set(ids))  # each memory once
    no_diagnostics(lines)
    assert done.stderr == ""  # diagnostics only with CHITTA_ADMIT_DEBUG


def test_admit_debug_puts_the_summary_on_stderr_only(stored, hook) -> None:
    done = hook("prompt", {"prompt": "why SQLite WAL?", "session_id": "s2"},
                CHITTA_ADMIT_DEBUG="1")  # fmt: skip
    summary = done.stderr.strip().splitlines()[-1]
    assert summary.startswith("[chitta] realm demo: ") and " ms of 6000 ms" in summary
    assert "memories admitted (corr 0, hyb " in summary and "xr 0" in summary
    assert f"chitta shown: lane=hyb id={stored['wal']}" in done.stderr
    no_diagnostics(context(done))


def test_a_budget_below_one_lane_prints_nothing_for_the_model(stored, hook) -> None:
    done = hook("prompt", {"prompt": "why SQLite WAL?", "session_id": "s1"},
                CHITTA_HOOK_BUDGET_MS="1",
                CHITTA_ADMIT_DEBUG="1")  # fmt: skip
    assert done.returncode == 0
    assert done.stdout == ""
    summary = next(line for line in done.stderr.splitlines() if "memories admitted" in line)
    assert "0 memories admitted" in summary
    assert "timeout 6 (corr, hyb, ctx, sem, kw, xr)" in summary


def test_nothing_admitted_prints_nothing(stored, hook) -> None:
    done = hook("prompt", {"prompt": "banana bread recipe with walnuts", "session_id": "s3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    done = hook("prompt", {"prompt": "   ", "session_id": "s3"})
    assert (done.returncode, done.stdout) == (0, "")


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


def test_session_start_gives_the_realms_corrections_as_context(stored, hook) -> None:
    done = hook("session-start", {"session_id": "s1", "source": "startup"})
    assert done.returncode == 0, done.stderr
    lines = context(done, "SessionStart")
    assert lines[0] == "Standing corrections and preferences stored in chitta (realm demo):"
    assert any(stored["deploy"] in line and DEPLOY in line for line in lines[1:])
    assert stored["wal"] not in "\n".join(lines)  # a wisdom is not a standing correction
    no_diagnostics(lines)


def test_session_start_refuses_an_unknown_source_off_the_models_context(stored, hook) -> None:
    done = hook("session-start", {"session_id": "s1", "source": "teleport"})
    assert done.returncode == 0
    assert "unknown SessionStart source 'teleport'" in done.stdout + done.stderr
    assert not done.stdout.startswith("{")


def _transcript(path: Path, prompt: str, reply: str) -> Path:
    events = [
        {"type": "user", "message": {"role": "user", "content": "an earlier question"}},
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "message": {"content": [
            {"type": "text", "text": reply},
            {"type": "tool_use", "name": "Read", "input": {}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_stop_records_the_prompt_and_the_reply_with_their_roles(
    daemon: Path, hook, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", "How do we recover from a crash?",
                             "SQLite WAL replays the log on open.")  # fmt: skip
    done = hook("stop", {"session_id": "s9", "transcript_path": str(transcript)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # a Stop hook's output is not context: what it did is on stderr
    assert "recorded the turn as episodes user " in one_line_on_stderr(done, "stop")
    with DaemonClient(daemon) as client:
        hits = client.call("recall", query="recover from a crash", realm="demo")["hits"]
    by_role = {h["source"].get("role"): h for h in hits if h["kind"] == "episode"}
    assert by_role["user"]["content"] == "How do we recover from a crash?"
    assert by_role["assistant"]["content"] == "SQLite WAL replays the log on open.\nDone."
    assert {h["source"]["session"] for h in by_role.values()} == {"s9"}


def test_stop_distills_the_users_correction_into_a_memory_of_its_own(
    daemon: Path, hook, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", "No, use pnpm, not npm for this repo. "
                             "Then run the tests.", "Switching to pnpm now.")  # fmt: skip
    done = hook("stop", {"session_id": "s9", "transcript_path": str(transcript)})
    assert "(1 distilled)" in one_line_on_stderr(done, "stop")
    with DaemonClient(daemon) as client:
        hits = client.call("recall", query="pnpm or npm", realm="demo")["hits"]
    fragment = next(h for h in hits if h["kind"] == "correction")
    assert fragment["content"] == "No, use pnpm, not npm for this repo."
    assert fragment["tags"] == ["operational"] and fragment["source"]["session"] == "s9"
    assert fragment["source"]["via"] == "distiller:rules/1"
    assert len(fragment["source"]["turns"]) == 1  # the turn it was cut from


def test_stop_dates_the_episode_by_the_prompt_line_timestamp(
    daemon: Path, hook, home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    events = [
        {"type": "user", "timestamp": "2023-05-20T15:08:00.000Z",
         "message": {"role": "user", "content": "Which mug did I buy for my coworkers?"}},
        {"type": "assistant", "timestamp": "2023-05-20T15:08:09.000Z",
         "message": {"content": [{"type": "text", "text": "The blue enamel ones."}]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = hook("stop", {"session_id": "s9", "transcript_path": str(transcript)})
    with DaemonClient(daemon) as client:  # what the store holds, on either backend
        lines = [json.loads(line) for line in client.call("export_memories")["jsonl"].splitlines()]
    times = [(r["source"].get("role"), parse_time(r["event_time"]))
             for r in lines if r.get("type") == "memory" and r["kind"] == "episode"]  # fmt: skip
    # Both sides of the turn are dated by the prompt line: 2023-05-20 15:08 UTC.
    assert sorted(times) == [("assistant", 1684595280000), ("user", 1684595280000)], done


def test_the_hook_path_imports_no_numpy_onnxruntime_or_store(
    stored, home: Path, daemon_store
) -> None:
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules]))\n"
        "from chitta.cli import main\n"
        "sys.argv = ['chitta', 'hook', 'prompt']\n"
        "main()\n"
    )
    event = json.dumps({"prompt": "WAL?", "session_id": "s1"})
    done = subprocess.run([sys.executable, "-c", probe], input=event,
                          capture_output=True, text=True, env=_env(home, daemon_store),
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "hookSpecificOutput" in done.stdout  # the whole path ran
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
