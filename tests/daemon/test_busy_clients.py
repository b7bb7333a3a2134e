"""chitta's own clients meeting a daemon with no room (every connection taken): the CLI says
so and exits 4, the hooks stay quiet and the Stop hook's episode waits in the spool, then lands
once there is room again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from chitta.daemon.client import DaemonClient

REALM = "busy"


def _run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env.update(CHITTA_HOME=str(home), CHITTA_REALM=REALM, CHITTA_HOOK_BUDGET_MS="8000")
    return subprocess.run([sys.executable, "-m", "chitta", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_clients_of_a_full_daemon_fail_clearly_and_lose_no_episode(
    home: Path, launch, tmp_path: Path
) -> None:
    launch(home, "--max-connections", "1")
    sock = home / "chitta.sock"
    held = DaemonClient(sock, timeout_s=10, busy_retry_s=10)
    held.call("memory_status")  # it has the one place (a start-up probe's may just be freeing)
    try:
        recall = _run(home, "recall", "anything at all")
        assert recall.returncode == 4, recall.stderr
        assert "open connections" in recall.stderr and "Traceback" not in recall.stderr
        prompt = _run(
            home,
            "hook",
            "prompt",
            stdin=json.dumps(
                {"prompt": "what do we know about kayaks?", "session_id": "s1", "cwd": "/nowhere"}
            ),
        )
        assert prompt.returncode == 0 and prompt.stdout == "" and "Traceback" not in prompt.stderr
        transcript = tmp_path / "t.jsonl"
        transcript.write_text("".join(json.dumps(e) + "\n" for e in [
            {"type": "user", "message": {"role": "user", "content":
                "We keep the kayaks in the boathouse by the north pier"}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text":
                "Noted: the kayaks are kept in the boathouse by the north pier."}]}},
        ]))  # fmt: skip
        stop = _run(home, "hook", "stop", stdin=json.dumps(
            {"session_id": "s1", "transcript_path": str(transcript)}))  # fmt: skip
        assert stop.returncode == 0 and "spool" in stop.stderr, stop.stderr
    finally:
        held.close()
    deadline = time.monotonic() + 30  # the daemon takes the spool in once it looks again
    while True:
        with DaemonClient(sock) as client:
            status = client.call("memory_status")
        if status["per_realm"].get(REALM) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status["per_realm"].get(REALM) == 2  # both sides of the turn
