"""Long work through the daemon: not cut by the request deadline, its progress reported, its
report complete — the same as in process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chitta.daemon.client import DaemonClient


def jsonl(n: int, bad: tuple[int, ...] = ()) -> str:
    """``n`` memory lines of a JSONL export; the lines numbered in ``bad`` are not JSON."""
    lines = []
    for i in range(1, n + 1):
        if i in bad:
            lines.append("{not json")
        else:
            text = f"Import line {i}: the service number {i} keeps its logs for {i % 30} days"
            lines.append(json.dumps({"type": "memory", "kind": "insight", "content": text}))
    return "\n".join(lines) + "\n"


def chitta(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip


def test_an_import_longer_than_the_deadline_finishes_and_reports_every_bad_line(
    home: Path, launch, tmp_path: Path
) -> None:
    launch(home, "--deadline", "0.5")  # far shorter than embedding 1,500 memories
    dump = tmp_path / "big.jsonl"
    dump.write_text(jsonl(1500, bad=(7, 1499)))
    proc = chitta(home, "import", str(dump), "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done["imported"]["memories"] == 1498
    assert [e["line"] for e in done["errors"]] == [7, 1499]
    status = json.loads(chitta(home, "status", "--json").stdout)
    assert status["memories"] == 1498 and status["daemon"]["methods"]["import_memories"]


def test_progress_notifications_come_before_the_result(home: Path, launch, tmp_path) -> None:
    launch(home)
    dump = tmp_path / "some.jsonl"
    dump.write_text(jsonl(300))
    seen: list[tuple[int, int]] = []
    with DaemonClient(home / "chitta.sock", timeout_s=None) as client:
        reply = client.call("import_memories", progress=lambda d, t: seen.append((d, t)),
                            path=str(dump))  # fmt: skip
        assert reply["imported"]["memories"] == 300
        size = dump.stat().st_size
        assert seen and seen[-1] == (size, size)
        assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False))
        # A call without progress on the same connection gets no notifications.
        assert client.call("memory_status")["memories"] == 300


def test_a_relative_path_is_refused_by_the_daemon(home: Path, launch) -> None:
    launch(home)
    with DaemonClient(home / "chitta.sock") as client:
        for method in ("import_memories", "backup", "restore_backup"):
            try:
                client.call(method, path="relative.jsonl")
            except Exception as exc:  # noqa: BLE001 - the error's class is checked below
                assert "must be an absolute path" in str(exc)
                assert getattr(exc, "exit_code", None) == 2
            else:
                raise AssertionError(f"{method} took a relative path")
