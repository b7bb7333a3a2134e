"""Model distillation in a real daemon: its background worker sends a finished session to a
real model server on loopback and stores what comes back; a daemon killed while the model
thinks loses nothing (the next one sends the session again); status shows the counts and
nothing of what was said."""

from __future__ import annotations

import json
import time
from pathlib import Path

from chitta.daemon.client import DaemonClient
from chitta.distill.settings import FILE_NAME

TURNS = [("No, use pnpm, not npm for this repository.", "user"),
         ("Understood: I will run pnpm install instead of npm install.", "assistant")]  # fmt: skip
CURATED = {"kind": "correction", "content": "Use pnpm, not npm, in this repository.",
           "turns": [1, 2], "confidence": 0.9}  # fmt: skip
ENV = {"CHITTA_UPKEEP_START_S": "0", "CHITTA_UPKEEP_DISTILL_S": "1", "CHITTA_LOG_LEVEL": "DEBUG"}
WAIT_S = 60.0


def configure(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / FILE_NAME).write_text(
        f'idle_s = 0\n[[model]]\nkind = "openai"\nurl = "{url}/v1"\nmodel = "tiny"\n'
        "timeout_s = 60\n"
    )


def distilled(socket: Path) -> list[dict]:
    with DaemonClient(socket) as client:
        jsonl = client.call("export_memories", realm="w")["jsonl"]
    rows = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    return [r for r in rows if "distilled" in r.get("tags", [])]


def until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_daemon_killed_mid_batch_loses_nothing(
    home: Path, launch, daemon_store, daemon_socket: Path, chat_server
) -> None:
    configure(home, chat_server.url)
    # The model takes its time: the daemon is killed while the request is open.
    chat_server.raw("/v1/chat/completions", b"{}", delay_s=120)
    proc = launch(home, store=daemon_store, env=ENV)
    with DaemonClient(daemon_socket) as client:
        for text, role in TURNS:
            client.call("remember", content=text, kind="episode", session="s1", role=role,
                        realm="w")  # fmt: skip
    until(lambda: len(chat_server.requests) == 1, "the session to be sent")
    proc.kill()
    proc.wait(timeout=30)
    daemon_socket.unlink(missing_ok=True)

    chat_server.chat(json.dumps({"memories": [CURATED]}))
    launch(home, store=daemon_store, env=ENV)
    until(lambda: distilled(daemon_socket), "the curated memory")
    (memory,) = distilled(daemon_socket)
    assert memory["content"] == CURATED["content"]
    assert memory["source"]["via"] == "distiller:model/openai:tiny/prompt-1"
    assert len(memory["source"]["turns"]) == 2
    assert len(chat_server.requests) == 2  # the same session, sent again whole
    assert "[1] user: No, use pnpm" in chat_server.requests[1][2]["messages"][0]["content"]
    with DaemonClient(daemon_socket) as client:
        tasks = client.call("memory_status")["daemon"]["upkeep"]["tasks"]
    assert tasks["distill"]["models"] == ["openai:tiny"]
    assert tasks["distill"]["breaker"]["state"] == "closed"
    assert "pnpm" not in json.dumps(tasks)
    log = (home.parent / f"{home.name}-serve.log").read_text()
    # What is sent is logged by count only, even at debug level.
    assert "sending" in log and "characters of a session" in log and "pnpm" not in log
