"""Nothing lost when no daemon runs: hooks that start one, the Stop hook's spool, and the
daemon's intake of it (real hook processes, real daemons, a real kill -9)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from chitta import spool
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.store.sqlite import Store

START_S = 60.0


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(home), "CHITTA_HOOK_REALM": "demo", **extra}


def hook(home: Path, name: str, event: object, **extra: str) -> subprocess.CompletedProcess:
    text = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run([sys.executable, "-m", "chitta", "hook", name], input=text,
                          capture_output=True, text=True, env=_env(home, **extra),
                          timeout=120)  # fmt: skip


def wait_up(sock: Path, timeout_s: float = START_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not daemon_answers(sock):
        assert time.monotonic() < deadline, "no daemon came up"
        time.sleep(0.1)


@pytest.fixture
def started(home: Path, reaper) -> Iterator[None]:
    """Stops every daemon a hook started in ``home``, whatever the test did (one may still be
    loading its model when a test fails)."""
    yield
    reaper(home)


def transcript(tmp_path: Path, prompt: str, reply: str) -> Path:
    path = tmp_path / f"t{abs(hash(prompt))}.jsonl"
    events = [
        {"type": "user", "message": {"content": prompt}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": reply}]}},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def memories(sock: Path) -> list[dict]:
    with DaemonClient(sock) as client:
        jsonl = client.call("export_memories")["jsonl"]
    rows = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    return [r for r in rows if r.get("type") == "memory"]


def wait_for(sock: Path, count: int, timeout_s: float = 30.0) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while True:
        rows = memories(sock)
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def test_stop_without_a_daemon_spools_within_the_budget_and_the_daemon_takes_it_in(
    home: Path, tmp_path: Path, started
) -> None:
    path = transcript(tmp_path, "How do we recover from a crash?", "SQLite WAL replays the log.")
    event = {"session_id": "s-first", "transcript_path": str(path)}
    begun = time.monotonic()
    done = hook(home, "stop", event, CHITTA_HOOK_BUDGET_MS="300")
    wall = time.monotonic() - begun
    assert done.returncode == 0 and done.stdout == ""
    said = done.stderr.splitlines()
    assert len(said) == 1 and said[0].count("side in the spool") == 2, said  # both sides
    # The budget counts from the hook's start; the interpreter's own start comes on top.
    assert wall < 0.3 + 2.0
    wait_up(home / "chitta.sock")  # the hook started it
    rows = wait_for(home / "chitta.sock", 2)
    assert [(r["source"]["role"], r["content"]) for r in rows] == [
        ("user", "How do we recover from a crash?"),
        ("assistant", "SQLite WAL replays the log."),
    ]  # in order, each once
    for row in rows:
        assert (row["kind"], row["realm"], row["source"]["session"]) == (
            "episode", "demo", "s-first",
        )  # fmt: skip
        # When the turn ended, not when the daemon took it in.
        happened = datetime.fromisoformat(row["event_time"])
        assert abs(happened.timestamp() - time.time()) < 120
        assert happened < datetime.fromisoformat(row["created_at"])
    spool_file = spool.spool_path(home / "default.db")
    # The intake notes its counts just after the last file is gone: wait for them.
    deadline = time.monotonic() + 30
    while True:
        with DaemonClient(home / "chitta.sock") as client:
            status = client.call("memory_status")
        if status["spool"]["last_intake"] is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not spool_file.exists() and not spool.claimed(spool_file)
    assert status["spool"]["waiting"] == 0
    assert status["spool"]["last_intake"]["taken"] == 2


def test_stop_with_time_to_spare_waits_for_the_daemon_it_started(
    home: Path, tmp_path: Path, started
) -> None:
    path = transcript(tmp_path, "Which store do we use?", "SQLite in WAL mode, one file.")
    done = hook(home, "stop", {"session_id": "s2", "transcript_path": str(path)},
                CHITTA_HOOK_BUDGET_MS="60000")  # fmt: skip
    assert done.returncode == 0 and done.stdout == ""
    assert "recorded the turn as episodes user " in done.stderr
    assert len(memories(home / "chitta.sock")) == 2  # the user's side and the assistant's


def test_prompt_without_a_daemon_starts_one_and_prints_nothing(home: Path, started) -> None:
    done = hook(home, "prompt", {"prompt": "why WAL?", "session_id": "s1"},
                CHITTA_HOOK_BUDGET_MS="200")  # fmt: skip
    assert done.returncode == 0 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "one is starting" in done.stderr
    wait_up(home / "chitta.sock")


def test_spooled_records_are_taken_in_order_once(home: Path, launch) -> None:
    path = spool.spool_path(home / "default.db")
    contents = ["The deploy moved to Tuesday after the outage review",
                "Maria prefers tabs over spaces in every Go file she owns"]  # fmt: skip
    for n, text in enumerate(contents):
        spool.append(
            path,
            "remember",
            {
                "content": text,
                "kind": "episode",
                "realm": "demo",
                "session": f"s{n}",
                "event_time": f"2026-01-0{n + 1}T10:00:00+00:00",
            },
        )
    launch(home)
    rows = sorted(wait_for(home / "chitta.sock", 2), key=lambda r: r["id"])  # ids sort by time
    assert [r["content"] for r in rows] == contents
    assert [r["source"]["session"] for r in rows] == ["s0", "s1"]
    assert rows[0]["event_time"] < rows[1]["event_time"]


def test_a_corrupt_line_is_skipped_counted_and_shown_by_status(home: Path, launch) -> None:
    path = spool.spool_path(home / "default.db")
    spool.append(
        path, "remember", {"content": "The first kept record of the spool", "realm": "demo"}
    )
    with path.open("ab") as fh:
        fh.write(b"{not json at all\n")
    spool.append(
        path, "remember", {"content": "The second kept record of the spool", "realm": "demo"}
    )
    launch(home)
    assert len(wait_for(home / "chitta.sock", 2)) == 2
    done = subprocess.run([sys.executable, "-m", "chitta", "status", "--json"],
                          capture_output=True, text=True, env=_env(home), timeout=120)  # fmt: skip
    last = json.loads(done.stdout)["spool"]["last_intake"]
    assert (last["taken"], last["corrupt"], last["complete"]) == (2, 1, True)
    human = subprocess.run([sys.executable, "-m", "chitta", "status"], capture_output=True,
                           text=True, env=_env(home), timeout=120)  # fmt: skip
    assert "spool: 0 records waiting; last intake" in " ".join(human.stdout.split())


def test_a_record_that_landed_and_was_spooled_too_is_stored_once(home: Path, launch) -> None:
    # A Stop hook whose request was sent but not answered in time spools it as well.
    params = {
        "content": "The turn that reached the daemon and the spool",
        "kind": "episode",
        "realm": "demo",
        "session": "s1",
        "event_time": "2026-01-01T10:00:00+00:00",
    }
    proc = launch(home)
    with DaemonClient(home / "chitta.sock") as client:
        first = client.call("remember", **params)["id"]
    spool.append(spool.spool_path(home / "default.db"), "remember", params)
    time.sleep(3)  # a running daemon looks for a new spool every second
    rows = memories(home / "chitta.sock")
    assert [r["id"] for r in rows] == [first]
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def test_an_intake_killed_midway_loses_and_duplicates_nothing(home: Path, launch) -> None:
    path = spool.spool_path(home / "default.db")
    contents = [f"Record {n:03d} of a long spool about topic {n * 7919 % 1000}" for n in range(150)]
    # A realm each: such alike texts would fold into one another in one scope (a record
    # applied twice across the kill still would, in its own realm).
    for n, text in enumerate(contents):
        spool.append(path, "remember", {"content": text, "kind": "episode", "realm": f"r{n}"})
    env = _env(home)
    proc = subprocess.Popen([sys.executable, "-m", "chitta", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + START_S
        while not spool.claimed(path):  # the intake has claimed the spool: it is under way
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.005)
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (claimed,) = spool.claimed(path)
    with Store(home / "default.db") as store:
        done = spool.lines_done(store, claimed.name)
    assert 0 < done < len(contents), f"the kill came at line {done}, not mid-intake"
    (home / "chitta.sock").unlink(missing_ok=True)
    launch(home)
    rows = wait_for(home / "chitta.sock", len(contents))
    assert sorted(r["content"] for r in rows) == sorted(contents)  # each once
    assert [r["content"] for r in sorted(rows, key=lambda r: r["id"])] == contents  # in order
    assert not path.exists() and not spool.claimed(path)
