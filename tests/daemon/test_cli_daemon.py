"""The CLI goes through the daemon when one serves the store, and works alone when none does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def chitta(home: Path, *args: str, store: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    if store:  # a database store (tests/daemon/conftest.py daemon_store)
        env["CHITTA_STORE"] = store
    proc = subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc


def test_remember_recall_and_status_use_the_running_daemon(
    home: Path, launch, daemon_store
) -> None:
    launch(home, store=daemon_store)  # holds the store: an in-process open would be refused
    cli = partial(chitta, store=daemon_store)
    mid = cli(home, "remember", WAL, "--realm", "demo", "--kind", "wisdom").stdout.strip()
    human = cli(home, "recall", "SQLite WAL crash recovery", "--realm", "demo").stdout
    assert mid in human and "kw#1" in human
    data = json.loads(cli(home, "recall", "SQLite WAL", "--realm", "demo", "--json").stdout)
    assert data["hits"][0]["id"] == mid
    status = json.loads(cli(home, "status", "--json").stdout)
    assert status["per_realm"] == {"demo": 1}
    methods = status["daemon"]["methods"]
    assert methods["remember"]["requests"] == 1 and methods["recall"]["requests"] == 2
    assert "daemon: pid" in cli(home, "status").stdout


def test_without_a_daemon_the_cli_opens_the_store_itself(home: Path) -> None:
    mid = chitta(home, "remember", WAL, "--realm", "demo").stdout.strip()
    assert mid in chitta(home, "recall", "SQLite WAL", "--realm", "demo").stdout
    assert "daemon" not in json.loads(chitta(home, "status", "--json").stdout)


def test_forget_strengthen_and_weaken_go_through_the_daemon(
    home: Path, launch, daemon_store
) -> None:
    launch(home, store=daemon_store)
    cli = partial(chitta, store=daemon_store)
    mid = cli(home, "remember", WAL, "--realm", "demo").stdout.strip()
    for command in ("strengthen", "weaken", "forget"):
        assert f"{command}: {mid}" in cli(home, command, mid).stdout
    status = json.loads(cli(home, "status", "--json").stdout)
    assert status["forgotten"] == 1
    assert {"strengthen", "weaken", "forget"} <= set(status["daemon"]["methods"])


def test_commands_that_once_refused_go_through_the_daemon(home: Path, launch, daemon_store) -> None:
    launch(home, store=daemon_store)
    cli = partial(chitta, store=daemon_store)
    mid = cli(home, "remember", WAL, "--realm", "demo").stdout.strip()
    assert json.loads(cli(home, "show", mid, "--json").stdout)["memory"]["id"] == mid
    cli(home, "forget", mid)
    cli(home, "restore", mid)  # as forget's help says: restore brings it back
    assert "decayed" in cli(home, "decay").stdout
    methods = json.loads(cli(home, "status", "--json").stdout)["daemon"]["methods"]
    assert {"get_memory", "forget", "restore", "decay"} <= set(methods)


def test_export_and_import_go_through_the_daemon(
    home: Path, launch, daemon_store, tmp_path: Path
) -> None:
    launch(home, store=daemon_store)
    cli = partial(chitta, store=daemon_store)
    mid = cli(home, "remember", WAL, "--realm", "demo").stdout.strip()
    exported = cli(home, "export", "--realm", "demo").stdout
    assert mid in exported
    dump = tmp_path / "demo.jsonl"
    dump.write_text(exported)
    done = json.loads(cli(home, "import", str(dump), "--into", "copy", "--json").stdout)
    assert done["imported"]["memories"] == 1 and done["bad_lines"] == 0
    status = json.loads(cli(home, "status", "--json").stdout)
    assert status["per_realm"] == {"demo": 1, "copy": 1}
    assert {"export_memories", "import_memories"} <= set(status["daemon"]["methods"])


def test_a_memory_with_a_line_separator_survives_export_and_import(
    home, launch, daemon_store, tmp_path
):
    launch(home, store=daemon_store)
    cli = partial(chitta, store=daemon_store)
    text = "two parts\u2028of one memory, kept as they were written"
    mid = cli(home, "remember", text, "--realm", "demo").stdout.strip()
    dump = tmp_path / "demo.jsonl"
    dump.write_text(cli(home, "export", "--realm", "demo").stdout, encoding="utf-8")
    done = json.loads(cli(home, "import", str(dump), "--into", "copy", "--json").stdout)
    assert done["imported"]["memories"] == 1 and done["bad_lines"] == 0, done
    again = json.loads(cli(home, "recall", "two parts of one memory", "--realm", "copy",
                              "--json").stdout)  # fmt: skip
    assert again["hits"][0]["content"] == text and mid


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI in ``home``, whatever its exit code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


REFUSALS = [
    (("forget", "01NOSUCHMEMORY"), "memory_not_found", 3),
    (("strengthen", "01NOSUCHMEMORY"), "memory_not_found", 3),
    (("remember", "a memory of a kind that does not exist", "--kind", "bogus"), "unknown_kind", 2),
    (("remember", "short"), "content_too_short", 2),
    (("remember", "a memory filed under a realm with a bad name", "--realm", "bad realm!"),
     "bad_scope", 2),
]  # fmt: skip


def test_a_refusal_is_the_same_with_and_without_the_daemon(tmp_path: Path, launch) -> None:
    alone, served = tmp_path / "alone", tmp_path / "served"
    chitta(alone, "remember", WAL)  # a store to refuse from (none at all is another error)
    launch(served)
    for args, code, exit_code in REFUSALS:
        here, there = run(alone, *args), run(served, *args)
        assert (here.returncode, here.stderr) == (there.returncode, there.stderr), args
        assert here.returncode == exit_code, (args, here.stderr)
        assert here.stderr.startswith("error: ") and here.stdout == there.stdout == ""
        json_here = json.loads(run(alone, *args, "--json").stdout)
        json_there = json.loads(run(served, *args, "--json").stdout)
        assert json_here == json_there, args
        assert json_here["ok"] is False and json_here["error"] == code
    assert "methods" in json.loads(chitta(served, "status", "--json").stdout)["daemon"]
